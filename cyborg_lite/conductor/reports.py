"""Agent reports: diff a host's devices into the DB, then Placement.

An unchanged report (same digest as the last applied one) costs one
indexed read and no write. Otherwise the stored devices are loaded, diffed
(:mod:`cyborg_lite.conductor.inventory`), and only the changes are
written, then mirrored into Placement when a mirror is configured.
"""

import logging
import uuid

from cyborg_lite import model
from cyborg_lite.conductor import inventory
from cyborg_lite.db import reports as db_reports

LOG = logging.getLogger(__name__)


def rp_uuid_of(deployable_name: str) -> str:
    """A deployable's resource provider uuid: deterministic, so that a
    restarted agent or conductor finds the same provider again."""
    return str(uuid.uuid3(uuid.NAMESPACE_DNS, deployable_name))


class ReportService:
    def __init__(self, db, mirror=None):
        self._db = db
        self._mirror = mirror

    def report(self, hostname, devices, digest=None):
        """Apply one host's report; returns a summary of what changed."""
        reported = [model.DriverDevice.from_dict(d) for d in devices]
        digest = digest or model.report_digest(reported)
        if db_reports.get_digest(self._db, hostname) == digest:
            return {'changed': False}
        stored = db_reports.load_host(self._db, hostname)
        diff = inventory.diff_host(stored, reported)
        kept = db_reports.apply_diff(
            self._db, hostname, diff, digest, rp_uuid_of,
            reported_cpids=[d.controlpath_info for d in reported])
        if self._mirror is not None and not diff.empty:
            self._mirror.apply(hostname, diff, kept)
        summary = {'changed': not diff.empty, 'added': len(diff.added),
                   'removed': len(diff.removed) - len(kept),
                   'vanished': len(kept), 'updated': len(diff.changed)}
        LOG.info('Report from %s: %s', hostname, summary)
        return summary

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
