"""Mirror a host's deployables into Placement.

Each deployable is one child resource provider of the host's compute-node
provider (the provider Nova created, named by the report's hostname):

* uuid ``uuid3(NAMESPACE_DNS, deployable name)``, name = deployable name;
* one inventory record of the deployable's resource class, ``total`` =
  ``max_unit`` = ``num_accelerators``;
* the deployable's traits.

``PlacementMirror.apply`` writes what a report diff changed;
``PlacementMirror.sync_host`` writes a host's whole inventory. Both are
idempotent: the client reads before it writes and skips writes that would
change nothing, so running them twice costs reads only. Generation
conflicts are retried by the client.

Removing a provider that Nova still allocates from answers 409: the
provider stays, with a warning, and goes when the deployable is purged.
"""

import logging
import uuid as uuid_lib

from cyborg_lite.conductor import placement

LOG = logging.getLogger(__name__)


def rp_uuid_of(deployable_name: str) -> str:
    """A deployable's resource provider uuid: deterministic, so that a
    restarted agent or conductor finds the same provider again."""
    return str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, deployable_name))


def configured(conf) -> bool:
    """Whether ``[placement]`` names a Placement (``auth_type`` or
    ``endpoint_override`` set); without one nothing is mirrored."""
    return bool(conf.placement.auth_type or conf.placement.endpoint_override)


class ComputeNodeNotFound(placement.PlacementError):
    def __init__(self, hostname):
        super().__init__(404, 'Placement has no compute-node resource '
                              'provider named %r' % hostname)


class PlacementMirror:
    """Placement writes of the report diff, over a PlacementClient."""

    def __init__(self, client: placement.PlacementClient):
        self.client = client

    # -- what the conductor calls ----------------------------------------

    def apply(self, hostname, diff, kept=(), kept_names=(), reserved=()):
        """Write a ``HostDiff``.

        ``kept`` are removed devices the DB keeps (vanished, a handle in
        use) and ``kept_names`` removed deployables it keeps: their
        providers stay too, their inventories reserved in full, so that
        nothing more is scheduled on them. ``reserved`` names the
        deployables whose inventories are reserved in full (see
        ``cyborg_lite.db.reports.reserved_deployables``).
        Returns the names of the removed deployables whose providers
        Placement kept (still allocated).
        """
        kept_cpids = {d.controlpath_info for d in kept}
        kept_names = set(kept_names)
        added, removed, changed = [], [], []
        for dev in diff.added:
            added.extend(dev.deployables)
        gone_but_kept = []
        for dev in diff.removed:
            if dev.controlpath_info not in kept_cpids:
                removed.extend(dev.deployables)
            else:
                gone_but_kept.extend(dev.deployables)
        for change in diff.changed:
            added.extend(change.deployables_added)
            for dep in change.deployables_removed:
                (gone_but_kept if dep.name in kept_names
                 else removed).append(dep)
            changed.extend(c for c in change.deployables_changed
                           if c.placement_changed)
        if added or changed:
            self._ensure_classes_and_traits(
                added + [c.new for c in changed])
        if added:
            parent = self._parent(hostname)
            for dep in added:
                self._write(parent, dep, dep.name in reserved, new=True)
        for dep_change in changed:
            self._update(dep_change.old, dep_change.new,
                         dep_change.new.name in reserved)
        for dep in gone_but_kept:
            self._reserve_in_full(dep)
        return self.delete_deployables(d.name for d in removed)

    def sync_host(self, hostname, devices, reserved=(), new=False):
        """Make Placement hold exactly ``devices`` (as stored) for a host.

        Creates or fixes every deployable's provider, and deletes child
        providers of the compute node that look like ours (uuid derived
        from the name) but whose deployable is gone. ``reserved`` names
        the deployables whose inventories are reserved in full; ``new``:
        the devices are new (a host's first report), so their providers
        are most likely new too (see ``_write``). Returns the names of
        the providers kept because an allocation still uses them.
        """
        deployables = [dep for dev in devices for dep in dev.deployables]
        parent = self._parent(hostname)
        self._ensure_classes_and_traits(deployables)
        for dep in deployables:
            self._write(parent, dep, dep.name in reserved, new=new)
        wanted = {rp_uuid_of(d.name) for d in deployables}
        stale = [rp['name'] for rp in self._children(parent)
                 if rp['uuid'] not in wanted
                 and rp['uuid'] == rp_uuid_of(rp['name'])]
        return self.delete_deployables(stale)

    def delete_deployables(self, names):
        """Delete the providers of deployables ``names``; a provider in
        use (409) is kept with a warning. Returns the names kept."""
        kept = []
        for name in names:
            rp_uuid = rp_uuid_of(name)
            try:
                if self.client.delete_provider(rp_uuid):
                    LOG.info('Deleted resource provider %s (%s)', name,
                             rp_uuid)
            except placement.PlacementError as exc:
                if exc.status != 409:
                    raise
                LOG.warning('Resource provider %s (%s) is in use; kept: %s',
                            name, rp_uuid, exc.message)
                kept.append(name)
        return kept

    def _reserve_in_full(self, dep):
        """Reserve the inventory of a deployable gone from its host."""
        if dep.resource_class:
            self.set_reserved(rp_uuid_of(dep.name), dep.resource_class,
                              dep.num_accelerators)

    def set_reserved(self, rp_uuid, rc, reserved):
        """Reserve (device disabled) or free (enabled, back on its host)
        an inventory."""
        try:
            self.client.set_reserved(rp_uuid, rc, reserved)
        except placement.PlacementError as exc:
            if exc.status != 404:
                raise
            LOG.warning('No %s inventory on provider %s to reserve', rc,
                        rp_uuid)

    # -- the writes -----------------------------------------------------

    def _parent(self, hostname):
        rp = self.client.get_provider_by_name(hostname)
        if rp is None:
            raise ComputeNodeNotFound(hostname)
        return rp['uuid']

    def _children(self, parent):
        resp = self.client._call('GET', '/resource_providers?in_tree=%s'
                                 % parent)
        return [rp for rp in resp.json()['resource_providers']
                if rp['uuid'] != parent]

    def _ensure_classes_and_traits(self, deployables):
        for rc in sorted({d.resource_class for d in deployables
                          if d.resource_class}):
            self.client.ensure_resource_class(rc)
        self.client.ensure_traits(sorted(
            {t for d in deployables for t in d.traits}))

    def _write(self, parent, dep, in_full=False, new=False):
        """Create or fix a deployable's provider. A ``new`` deployable
        (just added to the database) is most likely new to Placement
        too: its provider is created and filled in three writes, no
        read; one that Placement has already (a database restored) is
        read and fixed as any other."""
        rp_uuid = rp_uuid_of(dep.name)
        created = new and self.client.create_child_provider(
            rp_uuid, dep.name, parent)
        if created:
            inventories = {}
            if dep.resource_class:
                total = dep.num_accelerators
                inventories[dep.resource_class] = {
                    'total': total, 'reserved': total if in_full else 0,
                    'max_unit': total}
            else:
                LOG.warning('Deployable %s has no resource class; its '
                            'provider has no inventory', dep.name)
            self.client.fill_new_provider(created, inventories, dep.traits)
            return
        self.client.ensure_child_provider(rp_uuid, dep.name, parent)
        if dep.resource_class:
            self._set_inventory(rp_uuid, dep.resource_class,
                                dep.num_accelerators, in_full)
        else:
            LOG.warning('Deployable %s has no resource class; its '
                        'provider has no inventory', dep.name)
        self.client.set_traits(rp_uuid, dep.traits)

    def _update(self, old, new, in_full=False):
        rp_uuid = rp_uuid_of(new.name)
        old_rc, new_rc = old.resource_class, new.resource_class
        if new_rc and (new_rc != old_rc or
                       new.num_accelerators != old.num_accelerators):
            self._set_inventory(rp_uuid, new_rc, new.num_accelerators,
                                in_full)
        if old_rc and old_rc != new_rc:
            self._delete_inventory(rp_uuid, old_rc)
        if old.traits != new.traits:
            self.client.set_traits(rp_uuid, new.traits)
        LOG.info('Updated resource provider %s', new.name)

    def _set_inventory(self, rp_uuid, rc, total, in_full=False):
        """``total`` and ``max_unit`` of ``rc``; with ``in_full`` (a
        disabled device, one gone while in use), new or not, and one
        fully reserved already, the inventory is reserved in full."""
        self.client.ensure_resource_class(rc)

        def change(inv):
            if inv is None:
                return {'total': total, 'reserved': total if in_full else 0,
                        'max_unit': total}
            full = in_full or (inv['total'] > 0 and
                               inv['reserved'] >= inv['total'])
            reserved = total if full else min(inv['reserved'], total)
            if (inv['total'], inv['max_unit'], inv['reserved']) == (
                    total, total, reserved):
                return None
            return dict(inv, total=total, max_unit=total, reserved=reserved)
        self.client._update_inventory(rp_uuid, rc, change)

    def _delete_inventory(self, rp_uuid, rc):
        url = '/resource_providers/%s/inventories/%s' % (rp_uuid, rc)
        try:
            self.client._call('DELETE', url, ok=(204, 404))
        except placement.PlacementError as exc:
            if exc.status != 409:
                raise
            LOG.warning('Inventory %s of provider %s is in use; kept',
                        rc, rp_uuid)
