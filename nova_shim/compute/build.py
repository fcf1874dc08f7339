"""Building an instance: schedule, accelerators, spawn.

:func:`build_and_run_instance` runs in a background thread after the API
answered 202 (the server is in BUILD/scheduling). The steps, as Nova's
conductor and compute manager do them:

1. schedule: the flavor's VCPU, MEMORY_MB and DISK_GB plus one
   suffixed request group per device profile group; Placement's
   allocation candidates; claim one (``scheduler.select_destination``);
2. create the ARQs, match them to providers from the candidate's
   mappings, bind them on the chosen node;
3. wait for the ``accelerator-request-bound`` events;
4. spawn the guest with one hostdev per ARQ.

Any failure deletes the ARQs, frees the allocation and leaves the
instance in ERROR with the reason in ``fault``. Unshelving an offloaded
instance runs the same :func:`place_and_spawn`.
"""

import logging

from nova_shim.compute import accelerators
from nova_shim.compute.db import Instance
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim import scheduler
from nova_shim.virt.libvirt import GuestSpec

LOG = logging.getLogger(__name__)


def guest_spec(instance: Instance) -> GuestSpec:
    return GuestSpec(uuid=instance.uuid, vcpus=instance.flavor['vcpus'],
                     memory_mb=instance.flavor['memory_mb'])


def schedule(deps: ComputeDeps, ctx: RequestContext,
             instance: Instance) -> scheduler.Selection:
    """Claim resources on one of this service's compute nodes."""
    groups = accelerators.request_groups(deps, ctx, instance)
    in_tree = (next(iter(deps.nodes.values()))
               if len(deps.nodes) == 1 else None)
    flavor = instance.flavor
    selection = scheduler.select_destination(
        deps.placement, instance.uuid, instance.project_id or '',
        instance.user_id or '', vcpus=flavor['vcpus'],
        memory_mb=flavor['memory_mb'], disk_gb=flavor['disk_gb'],
        groups=groups, in_tree=in_tree,
        host_subset_size=deps.conf.filter_scheduler.host_subset_size)
    deps.db.update(instance.uuid, host=deps.host,
                   node=selection.compute_node_name,
                   compute_node_uuid=selection.compute_node_uuid,
                   allocation_claimed=True)
    LOG.info('instance %s: scheduled to %s', instance.uuid,
             selection.compute_node_name)
    return selection


def place_and_spawn(deps: ComputeDeps, ctx: RequestContext,
                    instance: Instance, task_state: str) -> Instance:
    """Schedule, bind accelerators, spawn; the instance ends ACTIVE."""
    selection = schedule(deps, ctx, instance)
    instance = deps.db.get(instance.uuid)
    arqs: list[dict] = []
    if instance.device_profile:
        _uuids, waiter = accelerators.create_and_bind(deps, ctx, instance,
                                                      selection)
        arqs = accelerators.wait_for_bound_arqs(deps, ctx, instance.uuid,
                                                waiter)
    # Compare-and-swap: a delete that started meanwhile wins.
    instance = deps.db.update(instance.uuid, expected_task_state=task_state,
                              task_state=states.SPAWNING, action='spawn')
    deps.driver.spawn(guest_spec(instance), arqs)
    return deps.db.update(
        instance.uuid, vm_state=states.ACTIVE, task_state=None,
        power_state=int(deps.driver.get_power_state(instance.uuid)),
        fault=None)


def build_and_run_instance(deps: ComputeDeps, ctx: RequestContext,
                           instance_uuid: str) -> None:
    """The whole build; never raises (failures end in ERROR)."""
    try:
        instance = deps.db.get(instance_uuid)
        place_and_spawn(deps, ctx, instance, states.SCHEDULING)
        LOG.info('instance %s: built', instance_uuid)
    except Exception as exc:  # noqa: BLE001 - every failure ends in ERROR
        fail_instance(deps, ctx, instance_uuid, exc)


def fail_instance(deps: ComputeDeps, ctx: RequestContext,
                  instance_uuid: str, exc: Exception) -> None:
    """Clean up after a failed build or unshelve: ERROR, nothing held."""
    LOG.error('instance %s: build failed: %s', instance_uuid, exc,
              exc_info=not isinstance(exc, exception.NovaShimException))
    try:
        instance = deps.db.get(instance_uuid)
    except exception.InstanceNotFound:
        return  # deleted meanwhile; the delete cleaned up
    if instance.task_state == states.DELETING:
        return
    deps.driver.destroy(instance_uuid)
    accelerators.delete_arqs(deps, ctx, instance)
    release_allocation(deps, instance)
    deps.events.clear(instance_uuid)
    # As Nova's compute after an aborted build: no host, no node.
    deps.db.update(instance_uuid, vm_state=states.ERROR, task_state=None,
                   power_state=int(states.PowerState.NOSTATE),
                   arq_uuids=[], fault=str(exc), host=None, node=None,
                   compute_node_uuid=None)


def release_allocation(deps: ComputeDeps, instance: Instance) -> None:
    """Free the instance's Placement allocation, if it holds one."""
    if instance.allocation_claimed:
        scheduler.delete_allocation(deps.placement, instance.uuid)
        deps.db.update(instance.uuid, allocation_claimed=False)
