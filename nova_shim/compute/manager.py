"""ComputeManager: the entry point of every instance operation.

Thin on purpose: each method hands its work to a feature module
(``build``, ``power``, ``shelve``, ``move`` (evacuate), ``resize``
(cold migration and resize), ``snapshot``, ``accelerators``). Builds,
evacuations, moves, reverts and unshelves of offloaded instances wait
for Cyborg, so they run in a background thread and the caller gets the
instance in its new task state at once; the other
operations are quick on the hypervisor and run in the caller's thread
(snapshots and backups too: the caller gets the image once it is
uploaded).
"""

import logging
import threading
import uuid as uuidlib

from nova_shim.compute import accelerators
from nova_shim.compute import build
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import flavors
from nova_shim.compute import move
from nova_shim.compute import power
from nova_shim.compute import resize
from nova_shim.compute import shelve
from nova_shim.compute import snapshot
from nova_shim.compute import states
from nova_shim.context import in_current_context
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Flavor
from nova_shim.objects import Instance
from nova_shim.objects import Migration
from nova_shim.objects import Service
from nova_shim import scheduler

LOG = logging.getLogger(__name__)

# Operations refused for instances with accelerators, as Nova refuses
# them (a guest's passthrough device cannot move live nor be suspended
# with its memory), and refused for the others too.
REFUSED_ACTIONS = ('live-migrate', 'suspend', 'resume')


class ComputeManager:
    """Instances with accelerators, from build to delete."""

    def __init__(self, deps: ComputeDeps) -> None:
        self.deps = deps
        self._threads: list[threading.Thread] = []

    def _background(self, name: str, target, *args) -> None:
        """Run ``target(*args)`` in a thread whose log lines name the
        request that started it, as the request's own do."""
        thread = threading.Thread(
            target=in_current_context(target), args=args, daemon=True,
            name=name)
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)
        thread.start()

    def wait_for_background(self, timeout: float = 30.0) -> None:
        """Join the running builds and unshelves (for shutdown, tests)."""
        for thread in list(self._threads):
            thread.join(timeout)

    # -- reads ------------------------------------------------------

    def get(self, uuid: str) -> Instance:
        return self.deps.db.get(uuid)

    def list_instances(self, project_id: str | None = None) -> list[Instance]:
        return self.deps.db.list(project_id)

    def list_migrations(self, **filters) -> list[Migration]:
        """The cold migrations and resizes, newest first, filtered by
        ``instance_uuid``, ``status``, ``migration_type``,
        ``source_compute``, ``project_id`` and ``user_id``."""
        status = filters.pop('status', None)
        return self.deps.db.list_migrations(
            filters.pop('instance_uuid', None),
            [status] if status is not None else None, **filters)

    def list_services(self) -> list[Service]:
        """The compute services, one per hypervisor hostname."""
        return self.deps.db.list_services()

    def update_service(self, host: str, **values) -> Service:
        """Enable, disable or force down the service of ``host``."""
        return self.deps.db.update_service(host, **values)

    # -- flavors ------------------------------------------------------

    def list_flavors(self, is_public: bool | None = True) -> list[Flavor]:
        return self.deps.db.list_flavors(is_public)

    def get_flavor(self, ref: str) -> Flavor:
        """The flavor whose id (or name) is ``ref``; FlavorNotFound."""
        return self.deps.db.get_flavor(ref)

    def create_flavor(self, flavor: Flavor) -> Flavor:
        return self.deps.db.create_flavor(flavor)

    def update_flavor(self, ref: str, description: str | None) -> Flavor:
        return self.deps.db.update_flavor(ref, description=description)

    def delete_flavor(self, ref: str) -> None:
        """Instances built with it keep what they had of it."""
        self.deps.db.delete_flavor(ref)

    def set_flavor_extra_specs(self, ref: str,
                               specs: dict[str, str]) -> Flavor:
        return self.deps.db.set_extra_specs(ref, specs)

    def delete_flavor_extra_spec(self, ref: str, key: str) -> None:
        self.deps.db.delete_extra_spec(ref, key)

    def seed_flavors(self) -> int:
        """``[compute] flavors`` into a database that has no flavor."""
        return flavors.seed(self.deps)

    def get_arqs(self, ctx: RequestContext, instance: Instance) -> list[dict]:
        return accelerators.list_arqs(self.deps, ctx, instance)

    def get_hostdevs(self, instance: Instance) -> list[dict]:
        """The hostdevs in the guest's domain XML, as libvirt has it."""
        try:
            hostdevs = self.deps.driver.list_hostdevs(instance.uuid)
        except exception.InstanceNotFound:
            return []
        return [{'type': h.type, 'address': h.address} for h in hostdevs]

    # -- operations -------------------------------------------------

    def build_instance(self, ctx: RequestContext, name: str,
                       flavor: Flavor) -> Instance:
        """Record one instance (BUILD) and build it in the background."""
        return self.build_instances(ctx, name, flavor)[0]

    def build_instances(self, ctx: RequestContext, name: str, flavor: Flavor,
                        min_count: int = 1, max_count: int = 1,
                        reservation_id: str | None = None,
                        image_ref: str | None = None) -> list[Instance]:
        """Record ``max_count`` instances (BUILD) and build them in the
        background: at least ``min_count`` of them, or none
        (``build.build_instances``). Several are named
        ``<name>-1``, ``<name>-2``..., as Nova names them."""
        reservation_id = reservation_id or 'r-' + uuidlib.uuid4().hex[:8]
        instances = [self.deps.db.create(
            uuid=str(uuidlib.uuid4()),
            name=name if max_count == 1 else '%s-%d' % (name, n),
            project_id=ctx.project_id, user_id=ctx.user_id,
            flavor=flavor.snapshot(),
            vm_state=states.BUILDING, task_state=states.SCHEDULING,
            reservation_id=reservation_id, image_ref=image_ref)
            for n in range(1, max_count + 1)]
        self._background('build-%s' % reservation_id,
                         build.build_instances, self.deps, ctx,
                         [i.uuid for i in instances], min_count)
        return instances

    def _locked(self, uuid: str, operation, *args):
        """``operation(deps, *args)`` holding the instance's lock."""
        with self.deps.locks.hold(uuid):
            return operation(self.deps, *args)

    def start_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.start, ctx, uuid)

    def stop_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.stop, ctx, uuid)

    def reboot_instance(self, ctx: RequestContext, uuid: str,
                        reboot_type: str) -> Instance:
        return self._locked(uuid, power.reboot, ctx, uuid, reboot_type)

    def pause_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.pause, ctx, uuid)

    def unpause_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.unpause, ctx, uuid)

    def rebuild_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.rebuild, ctx, uuid)

    def shelve_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, shelve.shelve, ctx, uuid)

    def shelve_offload_instance(self, ctx: RequestContext,
                                uuid: str) -> Instance:
        return self._locked(uuid, shelve.shelve_offload, ctx, uuid)

    def unshelve_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        instance = shelve.begin_unshelve(self.deps, uuid)
        self._background('unshelve-%s' % uuid, self._locked, uuid,
                         shelve.unshelve, ctx, uuid)
        return instance

    def rescue_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.rescue, ctx, uuid)

    def unrescue_instance(self, ctx: RequestContext, uuid: str) -> Instance:
        return self._locked(uuid, power.unrescue, ctx, uuid)

    def evacuate_instance(self, ctx: RequestContext, uuid: str,
                          host: str | None = None) -> Instance:
        """Check and start an evacuation; it goes on in the background
        (``nova_shim.compute.move``)."""
        instance = move.begin(self.deps, uuid, host)
        self._background('evacuate-%s' % uuid, self._locked, uuid,
                         move.evacuate, ctx, uuid, host)
        return instance

    def migrate_instance(self, ctx: RequestContext, uuid: str,
                         host: str | None = None) -> Instance:
        """Start a cold migration (to ``host`` if given); it goes on in
        the background (``nova_shim.compute.resize``) and ends in
        VERIFY_RESIZE."""
        instance = resize.begin(self.deps, uuid, None, host)
        self._background('migrate-%s' % uuid, self._locked, uuid,
                         resize.migrate, ctx, uuid)
        return instance

    def resize_instance(self, ctx: RequestContext, uuid: str,
                        flavor_ref: str) -> Instance:
        """Start a resize to the flavor ``flavor_ref``; it goes on in the
        background and ends in VERIFY_RESIZE."""
        try:
            flavor = self.deps.db.get_flavor(flavor_ref)
        except exception.FlavorNotFound as exc:
            raise exception.InvalidRequest(
                reason='Unable to find flavor %s' % flavor_ref) from exc
        instance = resize.begin(self.deps, uuid, flavor.snapshot(), None)
        self._background('resize-%s' % uuid, self._locked, uuid,
                         resize.migrate, ctx, uuid)
        return instance

    def confirm_resize(self, ctx: RequestContext, uuid: str) -> Instance:
        """Confirm a move: the source's ARQs and allocation are freed."""
        return self._locked(uuid, resize.confirm, ctx, uuid)

    def revert_resize(self, ctx: RequestContext, uuid: str) -> Instance:
        """Start reverting a move; the instance goes back to its source
        in the background."""
        instance = resize.begin_revert(self.deps, uuid)
        self._background('revert-%s' % uuid, self._locked, uuid,
                         resize.revert, ctx, uuid)
        return instance

    def snapshot_instance(self, ctx: RequestContext, uuid: str, name: str,
                          metadata: dict) -> snapshot.ImageResult:
        return self._locked(uuid, snapshot.snapshot, ctx, uuid, name,
                            metadata)

    def backup_instance(self, ctx: RequestContext, uuid: str, name: str,
                        backup_type: str, rotation: int,
                        metadata: dict) -> snapshot.ImageResult:
        return self._locked(uuid, snapshot.backup, ctx, uuid, name,
                            backup_type, rotation, metadata)

    def refuse(self, uuid: str, action: str) -> None:
        """Live migration, suspend and resume: always refused; with
        accelerators as Nova 34 refuses them (ForbiddenWithAccelerators,
        a 400)."""
        instance = self.deps.db.get(uuid)
        if instance.device_profile:
            raise exception.ForbiddenWithAccelerators()
        raise exception.NotSupported(action=action)

    def delete_instance(self, ctx: RequestContext, uuid: str) -> None:
        """Destroy and undefine the guest, delete its ARQs, free its
        allocation, forget the instance. Allowed in any state.

        The instance is marked DELETING and the events it waits for are
        cancelled first, so that a build waiting for its binds stops;
        then, holding the instance's lock, which waits for whatever runs
        on it to end, the cleanup reads the instance afresh and undoes
        all of it."""
        self.deps.db.update(uuid, task_state=states.DELETING)
        self.deps.events.clear(uuid)
        with self.deps.locks.hold(uuid):
            try:
                instance = self.deps.db.get(uuid)
            except exception.InstanceNotFound:
                return  # deleted by a delete that ran meanwhile
            self._delete(ctx, instance)

    def _delete(self, ctx: RequestContext, instance: Instance) -> None:
        uuid = instance.uuid
        self.deps.driver.destroy(uuid)
        accelerators.delete_arqs(self.deps, ctx, instance)
        if instance.allocation_claimed or instance.vm_state == \
                states.BUILDING:
            # A build may be claiming right now: delete regardless.
            scheduler.delete_allocation(self.deps.placement, uuid)
        resize.forget_on_delete(self.deps, ctx, instance)
        self.deps.db.delete(uuid)
        LOG.info('instance %s: deleted', uuid)
