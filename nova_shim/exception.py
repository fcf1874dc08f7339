"""nova_shim's exceptions, named as Nova names them.

Every exception has a ``msg_fmt`` filled from keyword arguments. The
ones raised after a call to Cyborg or Placement also say what that
service answered: ``status_code`` is its HTTP status (``None`` when it
could not be reached) and the message includes its fault string, so a
404 can be told apart from a 500 without parsing messages.

HTTP status codes for nova_shim's own API are chosen in one table at
that API's edge, not here.
"""


class NovaShimException(Exception):
    """Base class: formats ``msg_fmt`` with the keyword arguments."""

    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message: str | None = None,
                 status_code: int | None = None, **kwargs) -> None:
        self.kwargs = kwargs
        self.status_code = status_code
        super().__init__(message or self.msg_fmt % kwargs)


class DeviceProfileError(NovaShimException):
    msg_fmt = 'Device profile name %(name)s: %(msg)s'


class AcceleratorRequestOpFailed(NovaShimException):
    msg_fmt = 'Failed to %(op)s accelerator requests: %(msg)s'


class AcceleratorRequestBindingFailed(NovaShimException):
    """A bind failed; ``arqs`` lists the UUIDs of the ARQs in the PATCH."""

    msg_fmt = 'Failed to bind accelerator requests: %(msg)s'

    def __init__(self, message: str | None = None, arqs=None,
                 status_code: int | None = None, **kwargs) -> None:
        self.arqs = list(arqs or [])
        super().__init__(message, status_code=status_code, **kwargs)


class ForbiddenWithAccelerators(NovaShimException):
    """An operation refused for instances with accelerators (HTTP 400)."""

    msg_fmt = 'Feature not supported with instances that have accelerators.'


class UnsupportedAttachHandle(NovaShimException):
    msg_fmt = ('Accelerator request %(arq)s has attach handle type '
               '%(type)r, which cannot be attached to a guest.')


class NoValidHost(NovaShimException):
    msg_fmt = 'No valid host was found. %(reason)s'


class PlacementAPIError(NovaShimException):
    msg_fmt = 'Placement request %(method)s %(url)s failed: %(msg)s'


class ItemNotFound(NovaShimException):
    """A resource the path names is not there (HTTP 404)."""

    msg_fmt = 'The resource could not be found.'


class VersionNotFound(ItemNotFound):
    """The route needs a later microversion (HTTP 404, as Nova)."""


class InstanceNotFound(NovaShimException):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class MigrationNotFound(NovaShimException):
    msg_fmt = 'Migration %(migration_id)s could not be found.'


class HypervisorError(NovaShimException):
    msg_fmt = 'Hypervisor operation %(op)s failed for %(instance)s: %(reason)s'


class InstanceInvalidState(NovaShimException):
    msg_fmt = ('Cannot %(action)s instance %(instance_id)s while it is '
               'in %(attr)s %(state)s.')


class NotAuthenticated(NovaShimException):
    """A request on servers without the project that keystonemiddleware
    (or the front end that authenticates callers) names."""
    msg_fmt = ('The request you have made requires authentication: it '
               'names no project (X-Project-Id).')


class InstanceNotReady(NovaShimException):
    """The action needs the instance's host, and it has none (its build
    failed, or it is shelved and offloaded), as Nova's
    ``check_instance_host``."""
    msg_fmt = 'Instance %(instance_id)s is not ready.'


class NotSupported(NovaShimException):
    msg_fmt = '%(action)s is not supported by nova_shim.'


class FlavorNotFound(NovaShimException):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'


class FlavorExists(NovaShimException):
    msg_fmt = 'Flavor with %(kind)s %(value)s already exists.'


class FlavorExtraSpecsNotFound(NovaShimException):
    msg_fmt = ('Flavor %(flavor_id)s has no extra specs with key '
               '%(extra_specs_key)s.')


class InvalidRequest(NovaShimException):
    msg_fmt = 'Invalid request: %(reason)s'


class InvalidGlobalAPIVersion(NovaShimException):
    """A well-formed microversion outside the range served: HTTP 406, as
    Nova answers it."""

    msg_fmt = ('Version %(req_ver)s is not supported by the API. Minimum '
               'is %(min_ver)s and maximum is %(max_ver)s.')


class BuildAbortException(NovaShimException):
    msg_fmt = 'Build of instance %(instance_uuid)s aborted: %(reason)s'


class InstanceEventTimeout(NovaShimException):
    msg_fmt = 'Timed out waiting for events %(events)s of %(instance_uuid)s.'


class InstanceDeleting(NovaShimException):
    """The instance is being deleted: what waited on it stops."""

    msg_fmt = 'Instance %(instance_id)s is being deleted.'


class Forbidden(NovaShimException):
    msg_fmt = 'Policy does not allow %(action)s to be performed.'


class PolicyNotAuthorized(Forbidden):
    """The policy refuses the caller this action (HTTP 403)."""

    msg_fmt = "Policy doesn't allow %(action)s to be performed."


class ServiceNotFound(NovaShimException):
    msg_fmt = 'Service %(service_id)s could not be found.'


class ComputeHostNotFound(NovaShimException):
    msg_fmt = 'Compute host %(host)s could not be found.'


class ComputeServiceInUse(NovaShimException):
    """Evacuation needs the instance's compute service to be down."""

    msg_fmt = 'Compute service of %(host)s is still in use.'


class MaxRetriesExceeded(NovaShimException):
    """Every attempt of a build failed, or no alternate was left; the
    message names each attempt."""

    msg_fmt = ('Exceeded maximum number of retries. Exhausted all hosts '
               'available for retrying build failures for instance '
               '%(instance_uuid)s. Attempts: %(attempts)s')
