"""Building instances: schedule, accelerators, spawn, reschedule.

``build_instances`` runs in a background thread after the API
answered 202 (the servers are in BUILD/scheduling). The steps, as Nova's
conductor and compute manager do them:

1. schedule every instance of the request: the flavor's VCPU, MEMORY_MB
   and DISK_GB plus one suffixed request group per device profile
   group; Placement's allocation candidates; claim one
   (``scheduler.select_destinations``), keeping up to ``[scheduler]
   max_attempts - 1`` alternates on other compute nodes. Fewer
   instances placed than the request's ``min_count``: NoValidHost for
   all of them, and every claim is freed; at least ``min_count``: those
   that found no room are dropped from the request;
2. for each placed instance, in a thread of its own: create the ARQs,
   match them to providers from the candidate's mappings, bind them on
   the chosen node, wait for the ``accelerator-request-bound`` events,
   spawn the guest with one hostdev per ARQ.

An attempt that fails in step 2 (Cyborg refuses the bind or the bind
ends BindFailed, the guest does not spawn) is undone (guest, ARQs,
allocation) and the next alternate is claimed, as Nova reschedules a
build; each attempt is recorded in the instance's ``retry``
(``num_attempts``, ``hosts``). When ``max_attempts`` are used up, or no
alternate can be claimed, the instance ends in ERROR with a fault that
names every attempt, holding nothing. (Nova aborts a build whose ARQs
fail to bind on the compute node without a reschedule; nova_shim
reschedules it, since another node's device may bind.)

Unshelving an offloaded instance and evacuating one run the same
``place_and_spawn``.
"""

import dataclasses
import logging
import threading

from nova_shim.compute import accelerators
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import services
from nova_shim.compute import states
from nova_shim.context import in_current_context
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Instance
from nova_shim import scheduler
from nova_shim.virt.libvirt import GuestSpec

LOG = logging.getLogger(__name__)

# Failures of one compute node that another node may not have.
RESCHEDULABLE = (exception.AcceleratorRequestBindingFailed,
                 exception.BuildAbortException,
                 exception.HypervisorError)


@dataclasses.dataclass
class Plan:
    """Where an instance goes: the claimed node, and the alternates a
    reschedule may claim, in order."""

    selection: scheduler.Selection
    alternates: list[scheduler.Candidate]


def guest_spec(instance: Instance) -> GuestSpec:
    return GuestSpec(uuid=instance.uuid, vcpus=instance.flavor['vcpus'],
                     memory_mb=instance.flavor['memory_mb'])


def _excluded_roots(deps: ComputeDeps, hosts: set[str]) -> set[str]:
    hosts = hosts | services.unavailable_hosts(deps)
    return {deps.nodes[h] for h in hosts if h in deps.nodes}


def schedule(deps: ComputeDeps, ctx: RequestContext, instance: Instance,
             exclude_hosts: frozenset[str] = frozenset(),
             consumer_generation: int | None = None) -> Plan:
    """Claim resources on a compute node of this service for the
    instance, never on ``exclude_hosts`` or a node that is down or
    disabled; keep the alternates. The claim is recorded on the
    instance (its host, node and ``retry``)."""
    plan = select_destination(deps, ctx, instance, exclude_hosts,
                              consumer_generation)
    _record_claim(deps, instance.uuid, plan.selection, first=True)
    return plan


def select_destination(deps: ComputeDeps, ctx: RequestContext,
                       instance: Instance,
                       exclude_hosts: frozenset[str] = frozenset(),
                       consumer_generation: int | None = None) -> Plan:
    """Claim resources for ``instance`` (its flavor, its device profile)
    as ``schedule`` does, without recording the claim on the instance:
    a move records it once the instance is there."""
    groups = accelerators.request_groups(deps, ctx, instance)
    in_tree = (next(iter(deps.nodes.values()))
               if len(deps.nodes) == 1 else None)
    flavor = instance.flavor
    selection, alternates = scheduler.select_destinations(
        deps.placement, instance.uuid, instance.project_id or '',
        instance.user_id or '', vcpus=flavor['vcpus'],
        memory_mb=flavor['memory_mb'], disk_gb=flavor['disk_gb'],
        groups=groups, in_tree=in_tree,
        host_subset_size=deps.conf.filter_scheduler.host_subset_size,
        max_attempts=deps.conf.scheduler.max_attempts,
        exclude_roots=_excluded_roots(deps, set(exclude_hosts)),
        consumer_generation=consumer_generation)
    return Plan(selection, alternates)


def _record_claim(deps: ComputeDeps, instance_uuid: str,
                  selection: scheduler.Selection,
                  first: bool = False) -> None:
    """Note the claim on the instance and in its ``retry`` (a new one
    when ``first``); if the instance was deleted while the claim was
    made, free it again."""
    try:
        instance = deps.db.update(
            instance_uuid, host=selection.compute_node_name,
            node=selection.compute_node_name,
            compute_node_uuid=selection.compute_node_uuid,
            allocation_claimed=True)
    except exception.InstanceNotFound:
        scheduler.delete_allocation(deps.placement, instance_uuid)
        raise
    retry = (None if first else instance.retry) or {'num_attempts': 0,
                                                     'hosts': []}
    retry = {'num_attempts': retry['num_attempts'] + 1,
             'hosts': retry['hosts'] + [[selection.compute_node_name,
                                         selection.compute_node_name]]}
    deps.db.update(instance_uuid, retry=retry)
    LOG.info('instance %s: attempt %d on %s', instance_uuid,
             retry['num_attempts'], selection.compute_node_name)


def spawn_on(deps: ComputeDeps, ctx: RequestContext, instance_uuid: str,
             selection: scheduler.Selection, task_state: str) -> Instance:
    """Bind the accelerators on the claimed node and spawn the guest
    there; the instance ends ACTIVE."""
    instance = deps.db.get(instance_uuid)
    arqs: list[dict] = []
    if instance.device_profile:
        _uuids, waiter = accelerators.create_and_bind(deps, ctx, instance,
                                                      selection)
        arqs = accelerators.wait_for_bound_arqs(deps, ctx, instance.uuid,
                                                waiter)
    # Compare-and-swap: a delete that started meanwhile wins.
    instance = deps.db.update(instance.uuid, expected_task_state=task_state,
                              task_state=states.SPAWNING, action='spawn')
    try:
        deps.driver.spawn(guest_spec(instance), arqs)
    except Exception:
        deps.db.update(instance.uuid, expected_task_state=states.SPAWNING,
                       task_state=task_state)
        raise
    return deps.db.update(
        instance.uuid, vm_state=states.ACTIVE, task_state=None,
        power_state=int(deps.driver.get_power_state(instance.uuid)),
        fault=None)


def run_attempts(deps: ComputeDeps, ctx: RequestContext,
                 instance_uuid: str, plan: Plan, task_state: str) -> Instance:
    """Spawn on the plan's node, then on its alternates while attempts
    fail on a node; MaxRetriesExceeded when none is left."""
    attempts: list[tuple[str, str]] = []
    selection: scheduler.Selection | None = plan.selection
    alternates = list(plan.alternates)
    while True:
        try:
            return spawn_on(deps, ctx, instance_uuid, selection, task_state)
        except RESCHEDULABLE as exc:
            attempts.append((selection.compute_node_name, str(exc)))
            LOG.warning('instance %s: attempt %d on %s failed: %s',
                        instance_uuid, len(attempts),
                        selection.compute_node_name, exc)
        undo_attempt(deps, ctx, instance_uuid)
        selection = None
        if len(attempts) < deps.conf.scheduler.max_attempts:
            selection = _claim_alternate(deps, instance_uuid, alternates)
        if selection is None:
            raise exception.MaxRetriesExceeded(
                instance_uuid=instance_uuid, attempts='; '.join(
                    '%d. %s: %s' % (n, host, reason)
                    for n, (host, reason) in enumerate(attempts, 1)))


def _claim_alternate(deps: ComputeDeps, instance_uuid: str,
                     alternates: list[scheduler.Candidate]
                     ) -> scheduler.Selection | None:
    """Claim the first alternate that still has room (Nova's reschedule
    to an alternate host) and record it on the instance."""
    selection = claim_alternate(deps, deps.db.get(instance_uuid), alternates)
    if selection is not None:
        _record_claim(deps, instance_uuid, selection)
    return selection


def claim_alternate(deps: ComputeDeps, instance: Instance,
                    alternates: list[scheduler.Candidate]
                    ) -> scheduler.Selection | None:
    """Claim the first of ``alternates`` (popped in turn) that still
    has room for ``instance``, skipping nodes that went down meanwhile;
    None when none is left."""
    excluded = _excluded_roots(deps, set())
    while alternates:
        candidate = alternates.pop(0)
        if candidate.root_provider_uuid in excluded:
            continue
        selection = scheduler.claim(deps.placement, instance.uuid, candidate,
                                    instance.project_id or '',
                                    instance.user_id or '')
        if selection is not None:
            return selection
    return None


def undo_attempt(deps: ComputeDeps, ctx: RequestContext,
                 instance_uuid: str) -> None:
    """Undo a failed attempt: no guest, no ARQs, no allocation, no node.

    InstanceInvalidState when a delete started meanwhile (the delete
    cleans up).
    """
    instance = deps.db.get(instance_uuid)
    if instance.task_state == states.DELETING:
        raise exception.InstanceInvalidState(
            action='reschedule', instance_id=instance_uuid,
            attr='task_state', state=instance.task_state)
    deps.driver.destroy(instance_uuid)
    accelerators.delete_attempt_arqs(deps, ctx, instance)
    release_allocation(deps, instance)
    deps.events.clear(instance_uuid)
    deps.db.update(instance_uuid, arq_uuids=[], host=None, node=None,
                   compute_node_uuid=None)


def place_and_spawn(deps: ComputeDeps, ctx: RequestContext,
                    instance: Instance, task_state: str) -> Instance:
    """Schedule, bind accelerators, spawn, rescheduling on failures of
    a node; the instance ends ACTIVE."""
    plan = schedule(deps, ctx, instance)
    return run_attempts(deps, ctx, instance.uuid, plan, task_state)


def build_instances(deps: ComputeDeps, ctx: RequestContext,
                    instance_uuids: list[str], min_count: int = 1) -> None:
    """The whole build of a request's instances; never raises (failures
    end in ERROR)."""
    plans: dict[str, Plan] = {}
    failure: Exception | None = None
    for uuid in instance_uuids:
        try:
            with deps.locks.hold(uuid):
                plans[uuid] = schedule(deps, ctx, deps.db.get(uuid))
        except exception.InstanceNotFound:
            continue  # deleted while the request was scheduled
        except Exception as exc:  # noqa: BLE001 - ends in ERROR below
            failure = exc
            break
    if len(plans) < min_count:
        if len(instance_uuids) > 1 and isinstance(
                failure, (exception.NoValidHost, type(None))):
            failure = exception.NoValidHost(
                reason='%d of the %d instances requested could be placed; '
                       'min_count is %d.' % (len(plans), len(instance_uuids),
                                             min_count))
        for uuid in instance_uuids:
            fail_instance(deps, ctx, uuid, failure or exception.NoValidHost(
                reason='The instance was deleted.'))
        return
    for uuid in instance_uuids:
        if uuid not in plans and failure is not None:
            # As many as fit, no fewer than min_count: the rest go.
            LOG.info('instance %s: no room (%s); the request has %d of '
                     'its %d instances', uuid, failure, len(plans),
                     len(instance_uuids))
            deps.db.delete(uuid)
    threads = [threading.Thread(target=in_current_context(_build_one),
                                args=(deps, ctx, uuid, plan),
                                name='build-%s' % uuid, daemon=True)
               for uuid, plan in plans.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _build_one(deps: ComputeDeps, ctx: RequestContext, instance_uuid: str,
               plan: Plan) -> None:
    """Build one instance, holding its lock: a delete meanwhile waits,
    then cleans up what the build made."""
    with deps.locks.hold(instance_uuid):
        try:
            run_attempts(deps, ctx, instance_uuid, plan, states.SCHEDULING)
            LOG.info('instance %s: built', instance_uuid)
        except Exception as exc:  # noqa: BLE001 - every failure: ERROR
            fail_instance(deps, ctx, instance_uuid, exc)


def fail_instance(deps: ComputeDeps, ctx: RequestContext,
                  instance_uuid: str, exc: Exception,
                  vm_state: str = states.ERROR) -> None:
    """Clean up after a failed build, unshelve or evacuation: nothing
    held, no host, and ``vm_state`` (ERROR; an unshelve of an offloaded
    instance goes back to SHELVED_OFFLOADED)."""
    expected = isinstance(exc, exception.NovaShimException)
    LOG.error('instance %s: build failed: %s', instance_uuid, exc,
              exc_info=not expected)
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
    deps.db.update(instance_uuid, vm_state=vm_state, task_state=None,
                   power_state=int(states.PowerState.NOSTATE),
                   arq_uuids=[], fault=str(exc), host=None, node=None,
                   compute_node_uuid=None)


def release_allocation(deps: ComputeDeps, instance: Instance) -> None:
    """Free the instance's Placement allocation, if it holds one."""
    if instance.allocation_claimed:
        scheduler.delete_allocation(deps.placement, instance.uuid)
        deps.db.update(instance.uuid, allocation_claimed=False)
