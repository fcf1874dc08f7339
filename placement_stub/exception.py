"""Domain exceptions raised by the DB layer; errors.py maps them to HTTP."""


class PlacementException(Exception):
    """Base: the message is ``msg_fmt % kwargs``."""

    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        super().__init__(self.msg_fmt % kwargs)


class NotFound(PlacementException):
    msg_fmt = '%(what)s'


class ProviderNotFound(NotFound):
    msg_fmt = 'No resource provider with uuid %(uuid)s found.'


class Conflict(PlacementException):
    msg_fmt = '%(detail)s'


class ConcurrentUpdate(Conflict):
    msg_fmt = ('%(what)s generation conflict: another thread updated it '
               'first. Please retry your update.')


class DuplicateName(Conflict):
    msg_fmt = 'Conflicting resource provider name: %(name)s already exists.'


class ProviderInUse(Conflict):
    msg_fmt = ('Unable to delete resource provider %(uuid)s: Resource '
               'provider has allocations.')


class CannotDeleteParent(Conflict):
    msg_fmt = ('Unable to delete parent resource provider %(uuid)s: It has '
               'child resource providers.')


class InventoryInUse(Conflict):
    msg_fmt = ("Inventory for '%(rc)s' on resource provider '%(uuid)s' "
               "in use.")


class InvalidInput(PlacementException):
    msg_fmt = '%(detail)s'


class InsufficientCapacity(Conflict):
    msg_fmt = ('Unable to allocate inventory: Unable to create allocation '
               'for \'%(rc)s\' on resource provider \'%(uuid)s\'. The '
               'requested amount would exceed the capacity.')


class ConsumerGenerationConflict(ConcurrentUpdate):
    msg_fmt = ('consumer generation conflict - expected %(expected)s but '
               'got %(got)s')


class AllocationConstraintsViolated(Conflict):
    msg_fmt = ('Unable to allocate inventory: Unable to create allocation '
               'for \'%(rc)s\' on resource provider \'%(uuid)s\'. The '
               'requested amount would violate inventory constraints.')


class ObjectActionError(InvalidInput):
    msg_fmt = 'Object action %(action)s failed because: %(reason)s'
