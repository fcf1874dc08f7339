"""Nova's instance states, with Nova's values.

``vm_state`` is where the instance stands, ``task_state`` what is being
done to it (None when idle), ``power_state`` what the hypervisor says
(``nova_shim.virt.power_state.PowerState``). ``ALLOWED_VM_STATES``
is the one table of which action may start from which vm_state, as
Nova's ``check_instance_state`` decorators say.
"""

from nova_shim.virt.power_state import PowerState

# vm_state
ACTIVE = 'active'
BUILDING = 'building'
PAUSED = 'paused'
SUSPENDED = 'suspended'
STOPPED = 'stopped'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'
RESCUED = 'rescued'
RESIZED = 'resized'  # moved or resized, waiting to be confirmed or reverted
DELETED = 'deleted'
ERROR = 'error'

# task_state
SCHEDULING = 'scheduling'
SPAWNING = 'spawning'
POWERING_OFF = 'powering-off'
POWERING_ON = 'powering-on'
REBOOTING = 'rebooting'
REBOOTING_HARD = 'rebooting_hard'
PAUSING = 'pausing'
UNPAUSING = 'unpausing'
REBUILDING = 'rebuilding'
REBUILD_SPAWNING = 'rebuild_spawning'
SHELVING = 'shelving'
SHELVING_OFFLOADING = 'shelving_offloading'
UNSHELVING = 'unshelving'
DELETING = 'deleting'
RESCUING = 'rescuing'
UNRESCUING = 'unrescuing'
IMAGE_SNAPSHOT = 'image_snapshot'
IMAGE_BACKUP = 'image_backup'
IMAGE_UPLOADING = 'image_uploading'
RESIZE_PREP = 'resize_prep'
RESIZE_MIGRATING = 'resize_migrating'
RESIZE_MIGRATED = 'resize_migrated'
RESIZE_FINISH = 'resize_finish'
RESIZE_REVERTING = 'resize_reverting'
RESIZE_CONFIRMING = 'resize_confirming'

# Nova's API status (GET /servers "status") from vm_state.
API_STATUS = {ACTIVE: 'ACTIVE', BUILDING: 'BUILD', PAUSED: 'PAUSED',
              SUSPENDED: 'SUSPENDED', STOPPED: 'SHUTOFF',
              SHELVED: 'SHELVED', SHELVED_OFFLOADED: 'SHELVED_OFFLOADED',
              RESCUED: 'RESCUE', RESIZED: 'VERIFY_RESIZE',
              DELETED: 'DELETED', ERROR: 'ERROR'}
# While a task runs, some tasks show their own status in some vm_states,
# as Nova's ``_STATE_MAP``: a reboot only of an ACTIVE instance (a hard
# reboot of a STOPPED one is SHUTOFF), a rebuild of an ACTIVE, STOPPED
# or ERROR one, a move (cold migration or resize) of an ACTIVE or
# STOPPED one, and the revert of a RESIZED one.
_REBUILD_STATUS = {REBUILDING: 'REBUILD', REBUILD_SPAWNING: 'REBUILD'}
_RESIZE_STATUS = {task: 'RESIZE' for task in (
    RESIZE_PREP, RESIZE_MIGRATING, RESIZE_MIGRATED, RESIZE_FINISH)}
TASK_API_STATUS = {
    ACTIVE: {REBOOTING: 'REBOOT', REBOOTING_HARD: 'HARD_REBOOT',
             **_REBUILD_STATUS, **_RESIZE_STATUS},
    STOPPED: {**_REBUILD_STATUS, **_RESIZE_STATUS},
    ERROR: _REBUILD_STATUS,
    RESIZED: {RESIZE_REVERTING: 'REVERT_RESIZE'},
}

ALLOWED_VM_STATES = {
    'start': {STOPPED},
    'stop': {ACTIVE, ERROR},  # as Nova 34's check_instance_state
    'reboot': {ACTIVE, PAUSED, STOPPED, ERROR},
    'pause': {ACTIVE},
    'unpause': {PAUSED},
    'rebuild': {ACTIVE, STOPPED, ERROR},
    'shelve': {ACTIVE, STOPPED, PAUSED},
    'shelve_offload': {SHELVED},
    'unshelve': {SHELVED, SHELVED_OFFLOADED},
    'rescue': {ACTIVE, STOPPED, ERROR},
    'unrescue': {RESCUED},
    'evacuate': {ACTIVE, STOPPED, ERROR},
    'migrate': {ACTIVE, STOPPED},
    'resize': {ACTIVE, STOPPED},
    'confirm_resize': {RESIZED},
    'revert_resize': {RESIZED},
    'snapshot': {ACTIVE, STOPPED, PAUSED, SUSPENDED},
    'backup': {ACTIVE, STOPPED, PAUSED, SUSPENDED},
    'delete': None,  # any state
}
# The actions that need the instance's host (Nova's check_instance_host).
NEEDS_HOST = frozenset(ALLOWED_VM_STATES) - {'unshelve', 'delete'}

__all__ = ['PowerState']


def api_status(vm_state: str, task_state: str | None) -> str:
    """The ``status`` of a server in Nova's API."""
    by_task = TASK_API_STATUS.get(vm_state, {})
    if task_state in by_task:
        return by_task[task_state]
    return API_STATUS.get(vm_state, 'UNKNOWN')
