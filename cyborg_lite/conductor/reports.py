"""Agent reports: diff a host's devices into the DB, then Placement.

An unchanged report (same digest as the last applied one) costs one
indexed read and no write, in the DB and in Placement. Otherwise the
stored devices are loaded, diffed (``cyborg_lite.conductor.inventory``),
and only the changes are written, then mirrored into Placement when a
mirror is configured.

The first report of a host that this conductor sees (and the first after
a failed Placement write) mirrors the host's whole stored inventory
instead of the diff, so that a conductor restart heals Placement drift;
unless another conductor mirrored the host in full since this one
started (``host_reports.mirrored_at``, which a failed Placement write
clears): with several conductors, a host is mirrored in full once per
conductor start, not once per conductor. That full mirror reads the DB,
writes Placement, and sets the host's ``mirrored_at``.
"""

import logging
import threading

from oslo_utils import timeutils

from cyborg_lite import model
from cyborg_lite.conductor import inventory
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.db import reports as db_reports

LOG = logging.getLogger(__name__)

rp_uuid_of = placement_mirror.rp_uuid_of
# How often a report that other reports of its host keep overtaking is
# diffed again before it fails (the agent sends it again).
REPORT_ATTEMPTS = 5


class ReportService:
    def __init__(self, db, mirror=None):
        self._db = db
        self._mirror = mirror
        self._started = timeutils.utcnow()
        # Hosts that Placement holds as stored, as far as this conductor
        # knows: mirrored in full since its start, by it or by another
        # conductor (``host_reports.mirrored_at``).
        self._synced = set()
        self._lock = threading.Lock()
        self._host_locks = {}  # hostname -> Lock: one report at a time

    def report(self, hostname, devices, digest=None):
        """Apply one host's report; returns a summary of what changed.

        A report that another report of the host overtook (its diff was
        made from a state that changed before it was written) loads the
        host again and makes a new diff, up to REPORT_ATTEMPTS times.
        Reports of one host are applied one at a time in this conductor,
        DB write and Placement writes together, so that Placement gets
        them in the order of the DB; one that another conductor wrote
        while this one wrote Placement makes this one mirror the host
        in full, as the DB has it then.
        """
        with self._host_lock(hostname):
            return self._report(hostname, devices, digest)

    def _host_lock(self, hostname):
        with self._lock:
            return self._host_locks.setdefault(hostname, threading.Lock())

    def _report(self, hostname, devices, digest):
        stored_digest, mirrored_at = db_reports.get_report_state(
            self._db, hostname)
        self._trust_mirror(hostname, mirrored_at)
        if digest is not None and stored_digest == digest:
            # Unchanged, the common case: one indexed read, and the
            # devices are not even decoded.
            return self._unchanged(hostname)
        reported = [model.DriverDevice.from_dict(d) for d in devices]
        digest = digest or model.report_digest(reported)
        for attempt in range(1, REPORT_ATTEMPTS + 1):
            if attempt > 1:
                stored_digest = db_reports.get_digest(self._db, hostname)
            if stored_digest == digest:
                return self._unchanged(hostname)
            stored = db_reports.load_host(self._db, hostname)
            diff = inventory.diff_host(stored, reported)
            try:
                applied = db_reports.apply_diff(
                    self._db, hostname, diff, digest, rp_uuid_of,
                    reported_cpids=[d.controlpath_info for d in reported],
                    diffed_digest=stored_digest)
                break
            except db_reports.StaleReport:
                if attempt == REPORT_ATTEMPTS:
                    raise
                LOG.debug('Report from %s overtaken by another; diffing '
                          'again', hostname)
        self._mirror_report(hostname, reported, stored_digest, diff, applied)
        if applied.returned:
            self._free_returned(hostname, applied.returned)
        kept = applied.kept
        summary = {'changed': not diff.empty, 'added': len(diff.added),
                   'removed': len(diff.removed) - len(kept),
                   'vanished': len(kept), 'updated': len(diff.changed)}
        LOG.info('Report from %s: %s', hostname, summary)
        return summary

    def _unchanged(self, hostname):
        if self._needs_sync(hostname):
            self._mirror_host(hostname)
        return {'changed': False}

    def _mirror_report(self, hostname, reported, stored_digest, diff,
                       applied):
        """Mirror what a report wrote into Placement: the diff, or the
        whole host when it is not known to be in step."""
        if db_reports.is_pending(stored_digest):
            # The host was not as its last report said (a removal that
            # waited for an ARQ, a purge): Placement is mirrored in full,
            # which also deletes the providers of a purge whose own
            # Placement writes were not made.
            self._distrust_mirror(hostname)
        if self._needs_sync(hostname):
            # A host's first report (no digest stored before) stores
            # the devices reported, as they are, and none disabled.
            self._mirror_host(hostname, reported if stored_digest is None
                              else None)
        elif self._mirror is not None and not diff.empty:
            self._mirror_diff(hostname, diff, applied.kept)
            if db_reports.get_digest(self._db, hostname) != applied.digest:
                LOG.info('Host %s changed while its report was mirrored; '
                         'mirroring it in full', hostname)
                self._distrust_mirror(hostname)
                self._mirror_host(hostname)

    def _needs_sync(self, hostname):
        return self._mirror is not None and hostname not in self._synced

    def _trust_mirror(self, hostname, mirrored_at):
        """A host that a conductor mirrored in full since this one
        started is in step: this one need not mirror it again."""
        if mirrored_at is not None and mirrored_at >= self._started and \
                hostname not in self._synced:
            with self._lock:
                self._synced.add(hostname)

    def _distrust_mirror(self, hostname):
        """The host must be mirrored in full at its next report, by
        whichever conductor takes it."""
        with self._lock:
            self._synced.discard(hostname)
        db_reports.clear_mirrored(self._db, hostname)

    def _mirror_host(self, hostname, first_report=None):
        """Mirror the host's stored devices in full (no DB write).
        ``first_report``: the devices of the host's first report, just
        stored, whose providers Placement most likely lacks."""
        try:
            if first_report is not None:
                kept = self._mirror.sync_host(hostname, first_report,
                                              new=True)
            else:
                kept = self._mirror.sync_host(
                    hostname, db_reports.load_host(self._db, hostname),
                    db_reports.reserved_deployables(self._db, hostname))
        except Exception:
            LOG.exception('Mirroring host %s into Placement failed; the '
                          'next report tries again', hostname)
            return
        if kept:
            LOG.info('Providers %s of host %s are still allocated; the next '
                     'report deletes them', ', '.join(kept), hostname)
            return
        with self._lock:
            self._synced.add(hostname)
        db_reports.set_mirrored(self._db, hostname, timeutils.utcnow(),
                                db_reports.get_digest(self._db, hostname))
        LOG.info('Mirrored host %s into Placement', hostname)

    def _mirror_diff(self, hostname, diff, kept):
        kept_names = ()
        if any(c.deployables_removed for c in diff.changed):
            # The DB keeps a removed deployable while a handle is in use.
            kept_names = {dep.name for dev in
                          db_reports.load_host(self._db, hostname)
                          for dep in dev.deployables}
        try:
            still_allocated = self._mirror.apply(
                hostname, diff, kept, kept_names,
                db_reports.reserved_deployables(self._db, hostname))
        except Exception:
            LOG.exception('Placement update for host %s failed; the next '
                          'report mirrors the host in full', hostname)
            still_allocated = True
        if still_allocated:
            self._distrust_mirror(hostname)

    def _free_returned(self, hostname, names):
        """Free the inventories of deployables whose device came back to
        its host: they were reserved in full while it was gone."""
        LOG.info('Deployables %s of host %s are back', ', '.join(names),
                 hostname)
        if self._mirror is None:
            return
        names = set(names)
        try:
            for dev in db_reports.load_host(self._db, hostname):
                for dep in dev.deployables:
                    if dep.name in names and dep.resource_class:
                        self._mirror.set_reserved(rp_uuid_of(dep.name),
                                                  dep.resource_class, 0)
        except Exception:
            LOG.exception('Freeing the inventories of host %s in Placement '
                          'failed', hostname)

    def deployables_purged(self, names):
        """Delete the providers of deployables the DB has purged. One
        that Placement keeps (an allocation still uses it: Nova deletes
        an instance's ARQs before its allocation) or that could not be
        deleted goes at the next report of its host, which mirrors the
        host in full."""
        if self._mirror is None or not names:
            return
        try:
            kept = self._mirror.delete_deployables(names)
        except Exception:
            self._forget_synced()
            raise
        if kept:
            self._forget_synced()

    def _forget_synced(self):
        """Mirror every host in full at its next report."""
        with self._lock:
            self._synced.clear()
        db_reports.clear_mirrored(self._db)

    def set_reserved(self, deployables, status):
        """Reserve a disabled device's inventory in Placement (all of
        it), or free it again when enabled."""
        if self._mirror is None:
            return
        for dep in deployables:
            if dep['rp_uuid'] and dep['rc']:
                reserved = dep['total'] if status == 'maintaining' else 0
                self._mirror.set_reserved(dep['rp_uuid'], dep['rc'],
                                          reserved)
