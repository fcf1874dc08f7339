"""Domain exceptions of cyborg-lite.

Each exception has a ``msg_fmt`` filled from keyword arguments. They carry
no HTTP codes: the API maps them to statuses in one table
(``cyborg_lite.api.errors``) by their base class. They cross RPC
intact, because oslo.messaging rebuilds exceptions from this module
(``allowed_remote_exmods``) with the same arguments.
"""


class CyborgLiteException(Exception):
    msg_fmt = 'An unknown error occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                message = self.msg_fmt
        self.message = message
        super().__init__(message)


# --- base classes, one per HTTP status family -------------------------

class Invalid(CyborgLiteException):
    msg_fmt = 'Invalid input: %(reason)s'


class NotFound(CyborgLiteException):
    msg_fmt = 'Resource could not be found.'


class Conflict(CyborgLiteException):
    msg_fmt = 'Conflict: %(reason)s'


class Forbidden(CyborgLiteException):
    msg_fmt = 'Forbidden: %(reason)s'


class NotAcceptable(CyborgLiteException):
    msg_fmt = 'Request not acceptable: %(reason)s'


class Locked(CyborgLiteException):
    msg_fmt = 'Resource is locked: %(reason)s'


class ServiceUnavailable(CyborgLiteException):
    msg_fmt = 'Service unavailable: %(reason)s'


class ConductorTooOld(ServiceUnavailable):
    msg_fmt = ('%(method)s needs conductor RPC API %(needed)s, and this '
               'service sends at most %(cap)s ([upgrade_levels] conductor):'
               ' it is served once every conductor is upgraded and the '
               'cap is raised. Try again later.')


# --- device profiles --------------------------------------------------

class DeviceProfileNotFound(NotFound):
    msg_fmt = 'Device profile %(ident)s could not be found.'


class DuplicateDeviceProfileName(Conflict):
    msg_fmt = 'A device profile named %(name)s already exists.'


class DuplicateDeviceProfileUUID(Conflict):
    msg_fmt = 'A device profile with uuid %(uuid)s already exists.'


class DeviceProfileInUse(Conflict):
    msg_fmt = ('Device profile %(name)s is used by %(count)d accelerator '
               'request(s); delete them first.')


# --- accelerator requests ---------------------------------------------

class ARQNotFound(NotFound):
    msg_fmt = 'Accelerator request %(uuid)s could not be found.'


class ARQBadState(Conflict):
    msg_fmt = ('Accelerator request %(uuid)s is in state %(state)s; '
               '%(action)s needs one of %(expected)s.')


class ARQsUnresolved(Locked):
    msg_fmt = ('Accelerator requests of instance %(instance)s are not '
               'resolved yet.')


class InstanceAlreadyBound(Invalid):
    msg_fmt = ('Instance %(instance)s already has accelerator requests. '
               'Cannot bind additional ARQs.')


class NoFreeAttachHandle(Conflict):
    msg_fmt = 'Deployable %(deployable)s has no free attach handle.'


# --- inventory --------------------------------------------------------

class DeviceNotFound(NotFound):
    msg_fmt = 'Device %(uuid)s could not be found.'


class DeployableNotFound(NotFound):
    msg_fmt = 'Deployable %(ident)s could not be found.'


class DeployableNotProgrammable(Conflict):
    msg_fmt = ('Deployable %(ident)s cannot be programmed: it is a '
               '%(kind)s, and only FPGA deployables load a bitstream.')


class ProgramRequestNotFound(NotFound):
    msg_fmt = 'Program request %(request_id)s could not be found.'


class ProgrammingNotStarted(ServiceUnavailable):
    msg_fmt = ('No conductor started programming deployable %(uuid)s '
               'within %(seconds)s s, and none will: nothing was '
               'programmed. Try again later.')


class ProgrammingLost(ServiceUnavailable):
    msg_fmt = ('The conductor programming deployable %(uuid)s has not '
               'been heard of for %(seconds)s s: the FPGA may or may not '
               'hold bitstream %(image_uuid)s. Program it again.')


class AttributeNotFound(NotFound):
    msg_fmt = 'Attribute %(uuid)s could not be found.'


class ResourceClassNotFound(NotFound):
    msg_fmt = ('Deployable %(deployable)s of device %(device)s has no rc '
               'attribute: the resource class of its inventory in '
               'Placement is unknown.')


class AgentError(CyborgLiteException):
    msg_fmt = 'Host work on %(host)s failed: %(reason)s'


class ProgrammingFailed(AgentError):
    """The error a conductor recorded for a programming it ran."""

    msg_fmt = '%(reason)s'
