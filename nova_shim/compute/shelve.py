"""Shelve, shelve offload and unshelve.

Shelving powers the guest off (vm_state SHELVED). With
``[compute] shelved_offload_time = 0`` (the default, as Nova's) it is
offloaded at once: the guest is destroyed and undefined, its ARQs
deleted and its Placement allocation freed; the instance keeps no host
(SHELVED_OFFLOADED). Unshelving an offloaded instance schedules it
again and creates and binds new ARQs (in a background thread, like a
build); unshelving one that is still on its host powers it on with its
ARQs.
"""

import logging

from nova_shim.compute import accelerators
from nova_shim.compute import build
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import power
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim.objects import Instance

LOG = logging.getLogger(__name__)


def shelve(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    instance = power.begin(deps, uuid, 'shelve', states.SHELVING)
    instance = power.run(deps, instance,
                             lambda: deps.driver.power_off(uuid),
                             states.SHELVED)
    if deps.conf.compute.shelved_offload_time == 0:
        instance = shelve_offload(deps, ctx, uuid)
    return instance


def shelve_offload(deps: ComputeDeps, ctx: RequestContext,
                   uuid: str) -> Instance:
    instance = power.begin(deps, uuid, 'shelve_offload',
                               states.SHELVING_OFFLOADING)
    try:
        deps.driver.destroy(uuid)
        # Strict: while Cyborg holds the devices, Placement must not
        # count them free.
        accelerators.delete_arqs(deps, ctx, instance, strict=True)
        build.release_allocation(deps, instance)
    except Exception:
        # Still SHELVED, holding its ARQs and allocation until they are
        # freed, and free to be offloaded again (each step may be done
        # twice) or unshelved (which defines the guest again).
        deps.db.update(uuid, task_state=None)
        raise
    LOG.info('instance %s: offloaded from %s', uuid, instance.node)
    return deps.db.update(uuid, vm_state=states.SHELVED_OFFLOADED,
                          task_state=None, arq_uuids=[], host=None,
                          node=None, compute_node_uuid=None,
                          power_state=int(states.PowerState.NOSTATE))


def begin_unshelve(deps: ComputeDeps, uuid: str) -> Instance:
    """Claim the instance for unshelving (in the API request)."""
    return power.begin(deps, uuid, 'unshelve', states.UNSHELVING)


def unshelve(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> None:
    """Finish an unshelve ``begin_unshelve`` started; never raises.

    An offloaded instance that cannot be unshelved (no host has room, its
    accelerators do not bind) goes back to SHELVED_OFFLOADED holding
    nothing, as Nova leaves it, so that it can be unshelved again later;
    one shelved on its host that cannot be powered on stays SHELVED with
    its host, ARQs and allocation, as Nova (which starts it) leaves it,
    to be unshelved again."""
    instance = deps.db.get(uuid)
    if instance.vm_state == states.SHELVED:
        try:
            arqs = accelerators.get_arqs(deps, ctx, instance)
            deps.driver.power_on(build.guest_spec(instance), arqs)
        except Exception:  # noqa: BLE001 - every failure is recorded
            LOG.exception('instance %s: unshelve failed; still shelved',
                          uuid)
            deps.db.update(uuid, task_state=None, power_state=int(
                power.power_state_or_nostate(deps, uuid)))
            return
        deps.db.update(uuid, vm_state=states.ACTIVE, task_state=None,
                       power_state=int(deps.driver.get_power_state(uuid)))
        LOG.info('instance %s: unshelved', uuid)
        return
    try:
        build.place_and_spawn(deps, ctx, instance, states.UNSHELVING)
        LOG.info('instance %s: unshelved', uuid)
    except Exception as exc:  # noqa: BLE001 - every failure is recorded
        build.fail_instance(deps, ctx, uuid, exc, states.SHELVED_OFFLOADED)
