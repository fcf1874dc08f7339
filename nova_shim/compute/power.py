"""Power operations on a built instance: start, stop, reboot, pause,
unpause, rebuild, rescue, unrescue.

Each one moves the instance into its task_state with a compare-and-swap
(only from an allowed vm_state, only when no other task runs), does the
work on the hypervisor and records the outcome. Start and hard reboot
fetch the ARQs afresh and regenerate the domain XML; stop, pause and
unpause never call Cyborg, nor does a soft reboot unless libvirt
refuses it and it falls back to a hard one. Rebuild keeps the ARQs:
it waits for their events, which exit early because they are Bound, and
spawns the guest again. Rescue restarts the guest from a rescue disk
(its own disk second) with the same ARQs, fetched afresh, as Nova's
libvirt driver gives a rescued guest its accelerators; unrescue
restarts it from its own XML. If the hypervisor fails, the task_state
is cleared and the power state recorded; the vm_state stays, but for a
reboot, rescue or unrescue that leaves the guest not running: ERROR.
"""

import dataclasses
import logging
import os
from typing import Callable

from nova_shim.compute import accelerators
from nova_shim.compute import build
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Instance

LOG = logging.getLogger(__name__)


def begin(deps: ComputeDeps, instance_uuid: str, action: str,
          task_state: str, vm_states: set[str] | None = None) -> Instance:
    """Claim the instance for ``action``: InstanceNotReady if the action
    needs a host and the instance has none, InstanceInvalidState if
    another task runs or its vm_state does not allow the action."""
    if action in states.NEEDS_HOST and deps.db.get(instance_uuid).host is None:
        raise exception.InstanceNotReady(instance_id=instance_uuid)
    allowed = vm_states or states.ALLOWED_VM_STATES[action]
    return deps.db.update(instance_uuid, expected_task_state=None,
                          expected_vm_states=allowed, action=action,
                          task_state=task_state)


def run(deps: ComputeDeps, instance: Instance,
        work: Callable[[], None], vm_state: str,
        restarts: bool = False) -> Instance:
    """Do ``work``; on success record ``vm_state`` and the power state.

    On failure the task_state is cleared and the power state recorded
    as the hypervisor has it then; work that ``restarts`` the guest (a
    reboot, rescue, unrescue) and leaves it not running leaves the
    instance in ERROR, as Nova's reboot and rescue do.
    """
    try:
        work()
    except Exception as exc:
        power_state = power_state_or_nostate(deps, instance.uuid)
        changes = {'task_state': None, 'power_state': int(power_state)}
        if restarts and power_state != states.PowerState.RUNNING:
            changes.update(vm_state=states.ERROR, fault=str(exc))
        deps.db.update(instance.uuid, **changes)
        raise
    power_state = deps.driver.get_power_state(instance.uuid)
    LOG.info('instance %s: %s -> %s (%s)', instance.uuid, instance.task_state,
             vm_state, power_state.name)
    return deps.db.update(instance.uuid, vm_state=vm_state, task_state=None,
                          power_state=int(power_state))


def power_state_or_nostate(deps: ComputeDeps,
                            uuid: str) -> states.PowerState:
    """The guest's power state; NOSTATE if the hypervisor cannot say."""
    try:
        return deps.driver.get_power_state(uuid)
    except Exception:  # noqa: BLE001 - a failure is being recorded
        LOG.warning('instance %s: no power state', uuid, exc_info=True)
        return states.PowerState.NOSTATE


def start(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    instance = begin(deps, uuid, 'start', states.POWERING_ON)

    def work() -> None:
        arqs = accelerators.get_arqs(deps, ctx, instance)
        deps.driver.power_on(build.guest_spec(instance), arqs)
    return run(deps, instance, work, states.ACTIVE)


def stop(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    instance = begin(deps, uuid, 'stop', states.POWERING_OFF)
    return run(deps, instance, lambda: deps.driver.power_off(uuid),
               states.STOPPED)


def reboot(deps: ComputeDeps, ctx: RequestContext, uuid: str,
           reboot_type: str) -> Instance:
    """SOFT from ACTIVE only (as Nova); HARD from ACTIVE, PAUSED,
    STOPPED or ERROR."""
    if reboot_type not in ('SOFT', 'HARD'):
        raise exception.InvalidRequest(
            reason='reboot type must be SOFT or HARD, not %r' % reboot_type)
    if reboot_type == 'SOFT':
        instance = begin(deps, uuid, 'reboot', states.REBOOTING,
                         {states.ACTIVE})
    else:
        instance = begin(deps, uuid, 'reboot', states.REBOOTING_HARD)

    def work() -> None:
        # A soft reboot keeps the guest's XML and needs no ARQs (nor
        # Cyborg); they are read for the hard one, or the fallback to it.
        if reboot_type == 'SOFT' and deps.driver.soft_reboot(uuid):
            return
        arqs = accelerators.get_arqs(deps, ctx, instance)
        deps.driver.restart(build.guest_spec(instance), arqs)
    return run(deps, instance, work, states.ACTIVE, restarts=True)


def pause(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    instance = begin(deps, uuid, 'pause', states.PAUSING)
    return run(deps, instance, lambda: deps.driver.pause(uuid),
               states.PAUSED)


def unpause(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    instance = begin(deps, uuid, 'unpause', states.UNPAUSING)
    return run(deps, instance, lambda: deps.driver.unpause(uuid),
               states.ACTIVE)


def rebuild(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    """Re-create the guest on the same host with the same ARQs; a
    stopped instance is powered off again afterwards, as Nova brings a
    rebuilt instance back to its state."""
    instance = begin(deps, uuid, 'rebuild', states.REBUILDING)
    was_stopped = instance.vm_state == states.STOPPED

    def work() -> None:
        arqs: list[dict] = []
        if instance.device_profile:
            waiter = accelerators.expect_events(deps, instance)
            arqs = accelerators.wait_for_bound_arqs(deps, ctx, uuid, waiter)
        deps.db.update(uuid, task_state=states.REBUILD_SPAWNING)
        deps.driver.destroy(uuid)
        try:
            deps.driver.spawn(build.guest_spec(instance), arqs)
        except Exception as exc:
            # The old guest is gone and no new one runs: ERROR, as Nova
            # leaves an instance whose rebuild failed (its ARQs stay
            # bound, for a hard reboot or a rebuild to use again).
            deps.db.update(uuid, vm_state=states.ERROR, fault=str(exc),
                           power_state=int(states.PowerState.NOSTATE))
            raise
        if was_stopped:
            deps.driver.power_off(uuid)
    return run(deps, instance, work,
               states.STOPPED if was_stopped else states.ACTIVE)


def rescue_disk_path(deps: ComputeDeps, uuid: str) -> str:
    """Where the rescue disk of an instance is, as Nova's
    ``<instances_path>/<uuid>/disk.rescue``."""
    return os.path.join(deps.conf.state_path, 'instances', uuid,
                        'disk.rescue')


def _restart(deps: ComputeDeps, ctx: RequestContext, uuid: str,
             action: str, task_state: str, vm_state: str,
             rescue_disk: str | None = None) -> Instance:
    """Restart the guest with its ARQs, fetched afresh, from the rescue
    disk when one is given (rescue) or its own XML (unrescue)."""
    instance = begin(deps, uuid, action, task_state)

    def work() -> None:
        arqs = accelerators.get_arqs(deps, ctx, instance)
        deps.driver.restart(dataclasses.replace(
            build.guest_spec(instance), rescue_disk_path=rescue_disk), arqs)
    return run(deps, instance, work, vm_state, restarts=True)


def rescue(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    return _restart(deps, ctx, uuid, 'rescue',
                    states.RESCUING, states.RESCUED,
                    rescue_disk_path(deps, uuid))


def unrescue(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    return _restart(deps, ctx, uuid, 'unrescue',
                    states.UNRESCUING, states.ACTIVE)
