"""Evacuate: rebuild an instance of a failed host on another host.

As Nova (accelerated guests since Victoria): the instance's compute
service must be down (forced down by an operator,
``nova_shim.compute.services``), or the API answers 400 "Compute
service of HOST is still in use". ``begin`` checks that in the API
request and sets the REBUILDING task; ``evacuate`` then runs in the
background, as Nova's conductor and the destination compute do:

1. schedule on another node (never the source, nor a node that is down
   or disabled, nor one other than the asked ``host``), claiming the
   destination with the instance's consumer generation, so that the
   allocation moves from the source node to the destination in one
   Placement call;
2. delete the instance's ARQs (bound on the source) and the source's
   guest (Nova's source compute destroys it when it comes back; here
   every node shares one hypervisor connection);
3. create and bind new ARQs on the destination and spawn there, with
   reschedules to alternates as in a build (``build``).

The new ARQs are created for the instance's owner (its project and
user; with Keystone tokens the token decides), so that the owner still
sees and deletes them after an admin evacuated the instance. A stopped
instance stays stopped. No node with room: the instance keeps
its state, host and ARQs (nothing was changed), and the fault says why.
A failure after step 1 ends in ERROR with nothing held, as a failed
build.
"""

import logging

from nova_shim.compute import accelerators
from nova_shim.compute import build
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import power
from nova_shim.compute import services
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Instance
from nova_shim import scheduler

LOG = logging.getLogger(__name__)


def begin(deps: ComputeDeps, uuid: str, host: str | None) -> Instance:
    """Check the evacuation can start and claim the instance for it."""
    instance = deps.db.get(uuid)
    if instance.node is None:
        raise exception.InstanceNotReady(instance_id=uuid)
    if services.is_up(deps, instance.node):
        raise exception.ComputeServiceInUse(host=instance.node)
    if host is not None:
        if host == instance.node:
            raise exception.InvalidRequest(
                reason="the target host can't be the one the instance "
                       "is on")
        if host not in deps.nodes:
            raise exception.ComputeHostNotFound(host=host)
    return power.begin(deps, uuid, 'evacuate', states.REBUILDING)


def evacuate(deps: ComputeDeps, ctx: RequestContext, uuid: str,
             host: str | None = None) -> None:
    """Finish an evacuation ``begin`` started; never raises."""
    instance = deps.db.get(uuid)
    ctx = ctx.replaced(project_id=instance.project_id,
                       user_id=instance.user_id)
    source = instance.node
    was_stopped = instance.vm_state == states.STOPPED
    exclude = frozenset({source}) | (
        frozenset(deps.nodes) - {host} if host else frozenset())
    try:
        generation = scheduler.consumer_generation(deps.placement, uuid)
        plan = build.schedule(deps, ctx, instance, exclude_hosts=exclude,
                              consumer_generation=generation)
    except Exception as exc:  # noqa: BLE001 - the instance stays as it was
        LOG.error('instance %s: evacuation from %s found no host: %s',
                  uuid, source, exc)
        deps.db.update(uuid, task_state=None, fault=str(exc))
        return
    try:
        LOG.info('instance %s: evacuating from %s to %s', uuid, source,
                 plan.selection.compute_node_name)
        accelerators.delete_arqs(deps, ctx, instance)
        deps.driver.destroy(uuid)
        deps.db.update(uuid, arq_uuids=[])
        instance = build.run_attempts(deps, ctx, uuid, plan,
                                      states.REBUILDING)
        if was_stopped:
            deps.driver.power_off(uuid)
            deps.db.update(uuid, vm_state=states.STOPPED,
                           power_state=int(
                               deps.driver.get_power_state(uuid)))
        LOG.info('instance %s: evacuated to %s', uuid, instance.node)
    except Exception as exc:  # noqa: BLE001 - every failure ends in ERROR
        build.fail_instance(deps, ctx, uuid, exc)
