"""Cold migration and resize, with accelerators.

Nova 34 refuses both for an instance whose flavor names a device
profile (``ForbiddenWithAccelerators``); nova_shim does them, for
instances with accelerators or without, with Nova's API and states.
Both are one operation here, as in Nova: a cold migration is a resize
to the same flavor on another node.

``begin`` runs in the API request: it checks the request, moves the
instance to RESIZE_PREP and records a ``Migration`` (``pre-migrating``).
``migrate`` then runs in the background, holding the instance's lock:

1. the instance's allocation on the source is handed to the migration
   (one ``POST /allocations``), as Nova's conductor does, so that the
   source's resources and devices stay held in Placement while the move
   is unconfirmed; then a destination is claimed for the new flavor (its
   VCPU, MEMORY_MB, DISK_GB and device profile groups), never the
   source (unless a resize and ``[DEFAULT] allow_resize_to_same_host``),
   a node down or disabled, or a node other than the asked host;
2. the guest is powered off on the source and its ARQs are unbound
   there (Cyborg binds an instance's ARQs in one bind: the destination's
   could not be bound beside them). The ARQs stay, Unbound, and the
   migration records the device provider of each; their devices stay
   held in Placement by the migration;
3. new ARQs for the new flavor's device profile are created and bound
   on the destination, and once Cyborg says they are bound, the guest is
   defined there with their host devices and started (a stopped guest
   is only defined, and stays stopped). The instance is RESIZED (API
   status VERIFY_RESIZE) on the destination, with the new flavor.

An attempt that fails on the destination (the bind, the spawn) is
undone there and the next alternate node is claimed, as a build
reschedules. When none is left, or no node fits at all, everything is
undone: no ARQ or allocation on a destination, the source's allocation
given back to the instance, its original ARQs bound again on the source
to the same device providers, the guest started there again; the
migration ends in ``error`` and the instance's fault says why.

``confirm`` deletes the source's ARQs and the migration's allocation
(the source's devices are free, its mdevs were removed at the unbind).
``revert`` (in the background) deletes the destination's ARQs (an mdev
there is removed) and allocation, hands the source's allocation back to
the instance, binds the original ARQs on the source again and starts
the guest there with its original flavor. A revert whose ARQs cannot be
bound again (the source's device failed meanwhile) ends in ERROR.

Every node of the service shares one hypervisor connection, so the
guest's domain is redefined with the destination's devices rather than
copied to another host; on a revert it is redefined with the source's.
"""

import dataclasses
import logging
import uuid as uuidlib

from nova_shim.compute import accelerators
from nova_shim.compute import actions
from nova_shim.compute import build
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import power
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Instance
from nova_shim.objects import Migration
from nova_shim import scheduler

LOG = logging.getLogger(__name__)

# Migrations whose move is not over: the migration holds the source's
# allocation, or will.
OPEN_STATUSES = ('pre-migrating', 'migrating', 'finished', 'confirming',
                 'reverting')


def begin(deps: ComputeDeps, uuid: str, new_flavor: dict | None,
          host: str | None) -> Instance:
    """Check a cold migration (``new_flavor`` None) or resize can start,
    move the instance to RESIZE_PREP and record its migration."""
    instance = deps.db.get(uuid)
    if host is not None:
        if host not in deps.nodes:
            raise exception.InvalidRequest(
                reason='Compute host %s could not be found.' % host)
        if host == instance.node:
            raise exception.InvalidRequest(
                reason='The target host can not be the one the instance '
                       'is on.')
    action = 'migrate' if new_flavor is None else 'resize'
    if new_flavor is not None:
        _check_new_flavor(instance, new_flavor)
    instance = power.begin(deps, uuid, action, states.RESIZE_PREP)
    try:
        deps.db.create_migration(
            uuid=str(uuidlib.uuid4()), instance_uuid=uuid,
            migration_type='migration' if new_flavor is None else 'resize',
            status='pre-migrating', source_compute=instance.host,
            source_node=instance.node, dest_compute=host, dest_node=host,
            old_flavor=instance.flavor,
            new_flavor=new_flavor or instance.flavor,
            source_arqs=dict.fromkeys(instance.arq_uuids, ''),
            old_vm_state=instance.vm_state,
            project_id=instance.project_id, user_id=instance.user_id)
    except Exception:
        deps.db.update(uuid, expected_task_state=states.RESIZE_PREP,
                       task_state=None)
        raise
    return instance


def _check_new_flavor(instance: Instance, new_flavor: dict) -> None:
    """Nova's refusals of a resize's flavor (400s)."""
    old = instance.flavor
    if new_flavor['id'] == old.get('id'):
        raise exception.InvalidRequest(
            reason='When resizing, instances must change flavor!')
    if new_flavor['disk_gb'] < old['disk_gb']:
        raise exception.InvalidRequest(
            reason='Resize to zero disk flavor is not allowed.'
            if new_flavor['disk_gb'] == 0 else
            'Resizing to a flavor with a smaller disk is not allowed.')


def open_migration(deps: ComputeDeps, uuid: str,
                   statuses: tuple[str, ...] = OPEN_STATUSES
                   ) -> Migration | None:
    """The instance's latest migration in ``statuses``, if any."""
    found = deps.db.list_migrations(uuid, statuses)
    return found[0] if found else None


# -- the move ---------------------------------------------------------


@dataclasses.dataclass
class _Move:
    """One move in progress: the instance as it was on the source, with
    the new flavor, and what has been done so far."""

    instance: Instance
    migration: Migration
    source_allocation_held: bool = False  # by the migration's consumer
    destination_claimed: bool = False  # by the instance's consumer
    powered_off: bool = False
    source_unbound: bool = False

    @property
    def moving(self) -> Instance:
        """The instance as the destination sees it: the new flavor."""
        return dataclasses.replace(self.instance,
                                   flavor=self.migration.new_flavor)


def migrate(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> None:
    """Finish a move ``begin`` started; never raises."""
    try:
        instance = deps.db.get(uuid)
    except exception.InstanceNotFound:
        return  # deleted before the move began; the delete freed it
    ctx = ctx.replaced(project_id=instance.project_id,
                       user_id=instance.user_id)
    move = _Move(instance, open_migration(deps, uuid, ('pre-migrating',)))
    try:
        with actions.event(deps, ctx, uuid, 'conductor_migrate_server'):
            plan = _schedule(deps, ctx, move)
        with actions.event(deps, ctx, uuid, 'compute_resize_instance'):
            _leave_source(deps, ctx, move)
        with actions.event(deps, ctx, uuid, 'compute_finish_resize'):
            _finish_on_a_destination(deps, ctx, move, plan)
    except Exception as exc:  # noqa: BLE001 - every failure is undone
        _roll_back(deps, ctx, move, exc)


def _schedule(deps: ComputeDeps, ctx: RequestContext,
              move: _Move) -> build.Plan:
    """Hand the source's allocation to the migration, then claim a
    destination for the instance's consumer."""
    instance, migration = move.instance, move.migration
    move.source_allocation_held = scheduler.move_allocations(
        deps.placement, instance.uuid, migration.uuid)
    if migration.dest_node:
        exclude = frozenset(deps.nodes) - {migration.dest_node}
    elif migration.is_resize and deps.conf.allow_resize_to_same_host:
        exclude = frozenset()
    else:
        exclude = frozenset({instance.node})
    plan = build.select_destination(deps, ctx, move.moving,
                                    exclude_hosts=exclude)
    move.destination_claimed = True
    return plan


def _leave_source(deps: ComputeDeps, ctx: RequestContext,
                  move: _Move) -> None:
    """Power the guest off on the source and unbind its ARQs there,
    recording the device provider each was bound to."""
    uuid = move.instance.uuid
    deps.db.update(uuid, expected_task_state=states.RESIZE_PREP,
                   task_state=states.RESIZE_MIGRATING, action='migrate')
    deps.db.update_migration(move.migration.uuid, status='migrating')
    deps.driver.power_off(uuid)
    move.powered_off = True
    if move.migration.source_arqs:
        held = {arq['uuid']: arq['device_rp_uuid'] for arq in
                accelerators.get_arqs(deps, ctx, move.instance)}
        source_arqs = {u: held.get(u) or ''
                       for u in move.migration.source_arqs}
        move.migration = deps.db.update_migration(move.migration.uuid,
                                                  source_arqs=source_arqs)
        move.source_unbound = True
        accelerators.unbind(deps, ctx, list(source_arqs))
    deps.db.update(uuid, expected_task_state=states.RESIZE_MIGRATING,
                   task_state=states.RESIZE_MIGRATED, action='migrate')


def _finish_on_a_destination(deps: ComputeDeps, ctx: RequestContext,
                             move: _Move, plan: build.Plan) -> None:
    """Bind and spawn on the claimed node, then on the alternates while
    attempts fail on a node; MaxRetriesExceeded when none is left."""
    attempts: list[tuple[str, str]] = []
    selection: scheduler.Selection | None = plan.selection
    alternates = list(plan.alternates)
    while True:
        try:
            _finish_on(deps, ctx, move, selection)
            return
        except build.RESCHEDULABLE as exc:
            attempts.append((selection.compute_node_name, str(exc)))
            LOG.warning('instance %s: move attempt %d on %s failed: %s',
                        move.instance.uuid, len(attempts),
                        selection.compute_node_name, exc)
        _undo_destination(deps, ctx, move)
        selection = None
        if len(attempts) < deps.conf.scheduler.max_attempts:
            selection = build.claim_alternate(deps, move.moving, alternates)
            move.destination_claimed = selection is not None
        if selection is None:
            raise exception.MaxRetriesExceeded(
                instance_uuid=move.instance.uuid, attempts='; '.join(
                    '%d. %s: %s' % (n, host, reason)
                    for n, (host, reason) in enumerate(attempts, 1)))


def _finish_on(deps: ComputeDeps, ctx: RequestContext, move: _Move,
               selection: scheduler.Selection) -> None:
    """Bind the new flavor's ARQs on ``selection``'s node and spawn the
    guest there; the instance is RESIZED on that node."""
    uuid = move.instance.uuid
    deps.db.update(uuid, expected_task_state=states.RESIZE_MIGRATED,
                   task_state=states.RESIZE_FINISH, action='migrate')
    # Each node is a compute host of its own, as the instance's host.
    deps.db.update_migration(move.migration.uuid,
                             dest_compute=selection.compute_node_name,
                             dest_node=selection.compute_node_name)
    moving = move.moving
    arqs: list[dict] = []
    if moving.device_profile:
        _uuids, waiter = accelerators.create_and_bind(deps, ctx, moving,
                                                      selection)
        arqs = accelerators.wait_for_bound_arqs(deps, ctx, uuid, waiter)
    guest = build.guest_spec(moving)
    if move.migration.old_vm_state == states.STOPPED:
        deps.driver.define(guest, arqs)
    else:
        deps.driver.spawn(guest, arqs)
    deps.db.update(
        uuid, expected_task_state=states.RESIZE_FINISH,
        action='migrate', vm_state=states.RESIZED, task_state=None,
        flavor=move.migration.new_flavor, host=selection.compute_node_name,
        node=selection.compute_node_name,
        compute_node_uuid=selection.compute_node_uuid,
        arq_uuids=[arq['uuid'] for arq in arqs], allocation_claimed=True,
        power_state=int(deps.driver.get_power_state(uuid)), fault=None)
    deps.db.update_migration(move.migration.uuid, status='finished')
    LOG.info('instance %s: moved from %s to %s; waiting for a confirm or '
             'revert', uuid, move.instance.node,
             selection.compute_node_name)


def _undo_destination(deps: ComputeDeps, ctx: RequestContext,
                      move: _Move) -> None:
    """Undo what an attempt made on a destination: its ARQs (whatever
    their state) and its claim. The guest is dealt with by the caller:
    the next attempt redefines it, a roll back restores the source's."""
    uuid = move.instance.uuid
    current = deps.db.get(uuid)
    destination_arqs = [u for u in current.arq_uuids
                        if u not in move.migration.source_arq_uuids]
    accelerators.delete_arqs_by_uuid(deps, ctx, destination_arqs)
    deps.events.clear(uuid)
    if move.destination_claimed:
        scheduler.delete_allocation(deps.placement, uuid)
        move.destination_claimed = False
    deps.db.update(uuid, arq_uuids=move.migration.source_arq_uuids)
    if current.task_state == states.RESIZE_FINISH:
        deps.db.update(uuid, expected_task_state=states.RESIZE_FINISH,
                       task_state=states.RESIZE_MIGRATED, action='migrate')


def _roll_back(deps: ComputeDeps, ctx: RequestContext, move: _Move,
               exc: Exception) -> None:
    """Leave the instance where it was, as it was, holding what it held
    on the source; the migration ends in ``error``."""
    uuid = move.instance.uuid
    expected = isinstance(exc, exception.NovaShimException)
    LOG.error('instance %s: move failed: %s', uuid, exc,
              exc_info=not expected)
    deps.db.update_migration(move.migration.uuid, status='error')
    try:
        current = deps.db.get(uuid)
    except exception.InstanceNotFound:
        return  # deleted meanwhile; the delete cleaned up
    if current.task_state == states.DELETING:
        # The delete frees the rest (the migration's allocation too);
        # ARQs created but not yet bound it would not find.
        _undo_destination(deps, ctx, move)
        return
    try:
        _undo_destination(deps, ctx, move)
        if move.source_allocation_held:
            scheduler.move_allocations(deps.placement, move.migration.uuid,
                                       uuid)
        if move.powered_off:
            _restore_guest(deps, ctx, move.instance, move.migration,
                           rebind=move.source_unbound)
    except Exception as undo_exc:  # noqa: BLE001 - recorded below
        LOG.exception('instance %s: the failed move could not be undone',
                      uuid)
        deps.db.update(uuid, vm_state=states.ERROR, task_state=None,
                       fault='%s; then undoing it failed: %s'
                             % (exc, undo_exc))
        return
    deps.db.update(uuid, vm_state=move.instance.vm_state, task_state=None,
                   flavor=move.instance.flavor,
                   arq_uuids=move.migration.source_arq_uuids,
                   power_state=int(power.power_state_or_nostate(deps, uuid)),
                   fault=str(exc))


def _restore_guest(deps: ComputeDeps, ctx: RequestContext,
                   instance: Instance, migration: Migration,
                   rebind: bool = True) -> None:
    """The guest defined again on the source with its own flavor and
    its ARQs, bound there again (with ``rebind``) to the device
    providers they had; started if it ran."""
    if rebind:
        arqs = accelerators.rebind(deps, ctx, instance.uuid,
                                   migration.source_node,
                                   migration.source_arqs)
    else:
        arqs = accelerators.get_arqs(deps, ctx, instance)
    guest = build.guest_spec(instance)
    if instance.vm_state == states.STOPPED:
        deps.driver.define(guest, arqs)
    else:
        deps.driver.power_on(guest, arqs)


# -- confirm and revert -----------------------------------------------


def _finished_migration(deps: ComputeDeps, uuid: str) -> Migration:
    migration = open_migration(deps, uuid, ('finished',))
    if migration is None:
        raise exception.InvalidRequest(reason='Instance has not been '
                                              'resized.')
    return migration


def confirm(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> Instance:
    """Confirm a move: free the source (its ARQs, devices and the
    migration's allocation); the instance is ACTIVE, or STOPPED if it
    was, on the destination.

    If Cyborg cannot delete the source's ARQs, nothing else is done and
    the error is raised: the instance stays RESIZED, to be confirmed
    again."""
    instance = power.begin(deps, uuid, 'confirm_resize',
                           states.RESIZE_CONFIRMING)
    try:
        migration = _finished_migration(deps, uuid)
    except exception.InvalidRequest:
        deps.db.update(uuid, task_state=None)
        raise
    owner = ctx.replaced(project_id=instance.project_id,
                         user_id=instance.user_id)
    deps.db.update_migration(migration.uuid, status='confirming')
    try:
        with actions.event(deps, ctx, uuid, 'compute_confirm_resize'):
            accelerators.delete_arqs_by_uuid(
                deps, owner, migration.source_arq_uuids, strict=True)
            scheduler.delete_allocation(deps.placement, migration.uuid)
    except Exception:
        deps.db.update_migration(migration.uuid, status='finished')
        deps.db.update(uuid, task_state=None)
        raise
    deps.db.update_migration(migration.uuid, status='confirmed')
    vm_state = (states.STOPPED if migration.old_vm_state == states.STOPPED
                else states.ACTIVE)
    LOG.info('instance %s: move from %s confirmed', uuid,
             migration.source_node)
    return deps.db.update(
        uuid, vm_state=vm_state, task_state=None,
        power_state=int(power.power_state_or_nostate(deps, uuid)))


def begin_revert(deps: ComputeDeps, uuid: str) -> Instance:
    """Check a revert can start (in the API request): RESIZE_REVERTING."""
    instance = power.begin(deps, uuid, 'revert_resize',
                           states.RESIZE_REVERTING)
    try:
        _finished_migration(deps, uuid)
    except exception.InvalidRequest:
        deps.db.update(uuid, task_state=None)
        raise
    return instance


def revert(deps: ComputeDeps, ctx: RequestContext, uuid: str) -> None:
    """Finish a revert ``begin_revert`` started; never raises. The
    instance is back on its source as it was before the move, or, if
    that fails, in ERROR with the fault."""
    try:
        instance = deps.db.get(uuid)
        migration = _finished_migration(deps, uuid)
    except (exception.InstanceNotFound, exception.InvalidRequest):
        return  # deleted before the revert began; the delete freed it
    owner = ctx.replaced(project_id=instance.project_id,
                         user_id=instance.user_id)
    deps.db.update_migration(migration.uuid, status='reverting')
    source = dataclasses.replace(
        instance, flavor=migration.old_flavor, vm_state=(
            states.STOPPED if migration.old_vm_state == states.STOPPED
            else states.ACTIVE))
    try:
        with actions.event(deps, ctx, uuid, 'compute_revert_resize'):
            deps.driver.power_off(uuid)
            accelerators.delete_arqs_by_uuid(deps, owner,
                                             instance.arq_uuids, strict=True)
            scheduler.delete_allocation(deps.placement, uuid)
        with actions.event(deps, ctx, uuid, 'compute_finish_revert_resize'):
            scheduler.move_allocations(deps.placement, migration.uuid, uuid)
            deps.db.update(
                uuid, flavor=migration.old_flavor,
                arq_uuids=migration.source_arq_uuids,
                host=migration.source_node, node=migration.source_node,
                compute_node_uuid=deps.nodes.get(migration.source_node))
            _restore_guest(deps, owner, source, migration)
    except Exception as exc:  # noqa: BLE001 - recorded on the instance
        LOG.error('instance %s: revert failed: %s', uuid, exc,
                  exc_info=not isinstance(exc, exception.NovaShimException))
        deps.db.update_migration(migration.uuid, status='error')
        try:
            deps.db.update(uuid, vm_state=states.ERROR, task_state=None,
                           fault='Revert failed: %s' % exc)
        except exception.InstanceNotFound:
            pass
        return
    deps.db.update_migration(migration.uuid, status='reverted')
    deps.db.update(uuid, vm_state=source.vm_state, task_state=None,
                   power_state=int(power.power_state_or_nostate(deps, uuid)),
                   fault=None)
    LOG.info('instance %s: move reverted; back on %s', uuid,
             migration.source_node)


def forget_on_delete(deps: ComputeDeps, ctx: RequestContext,
                     instance: Instance) -> None:
    """For a deleted instance: free what its unfinished migrations may
    hold (the source's allocation and its Unbound ARQs), as Nova
    confirms a resize of a deleted instance; a finished move counts as
    confirmed. A move that failed because of the delete (``error``) may
    still hold them too: its roll back leaves them to the delete."""
    unfinished = OPEN_STATUSES + ('error',)
    for migration in deps.db.list_migrations(instance.uuid, unfinished):
        owner = ctx.replaced(project_id=instance.project_id,
                             user_id=instance.user_id)
        accelerators.delete_arqs_by_uuid(deps, owner,
                                         migration.source_arq_uuids)
        scheduler.delete_allocation(deps.placement, migration.uuid)
        if migration.status != 'error':
            deps.db.update_migration(
                migration.uuid, status='confirmed'
                if migration.status == 'finished' else 'error')
