"""Storing agent reports: load a host's devices, apply a diff.

``load_host`` rebuilds the ``cyborg_lite.model`` dataclasses of
one host from the DB, ``apply_diff`` writes only what a
``HostDiff`` says changed, and the
per-host digest lets an unchanged report stop after one indexed read.
"""

import collections
import dataclasses

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg_lite import model
from cyborg_lite.db import engine
from cyborg_lite.db import models


def get_digest(db, hostname):
    return get_report_state(db, hostname)[0]


def get_report_state(db, hostname):
    """``(digest, mirrored_at)`` of the host's last applied report, in
    one indexed read; ``(None, None)`` for a host never reported."""
    with db.reader() as session:
        row = session.execute(
            sa.select(models.HostReport.digest,
                      models.HostReport.mirrored_at)
            .where(models.HostReport.hostname == hostname)).first()
    return tuple(row) if row is not None else (None, None)


def set_mirrored(db, hostname, when, digest):
    """Placement holds the host as stored at ``digest`` since ``when``;
    nothing is written if the host has changed since."""
    with db.writer() as session:
        session.execute(sa.update(models.HostReport).where(
            models.HostReport.hostname == hostname,
            models.HostReport.digest == digest).values(mirrored_at=when))


def clear_mirrored(db, hostname=None):
    """Placement is not known to hold the host (every host with None)
    as stored: the next report of it mirrors it in full, whichever
    conductor takes it."""
    query = sa.update(models.HostReport).values(mirrored_at=None)
    if hostname is not None:
        query = query.where(models.HostReport.hostname == hostname)
    with db.writer() as session:
        session.execute(query.where(models.HostReport.mirrored_at.isnot(
            None)))


def pending_digest():
    """The digest stored while the host is not as its last report says
    (a removal waits for an ARQ to let go, a purge removed a device): it
    matches no report's digest, so that the next report is diffed again,
    and each is new, so that a report diffed before another write of
    the host fails its compare-and-swap even when that write left the
    host pending too."""
    return PENDING_PREFIX + uuidutils.generate_uuid(dashed=False)


PENDING_PREFIX = 'pending-'


def is_pending(digest) -> bool:
    """Whether ``digest`` is one ``pending_digest`` made."""
    return bool(digest) and digest.startswith(PENDING_PREFIX)


class StaleReport(Exception):
    """Another report of the host was applied after this one's diff was
    made: load the host again and make a new diff."""


def _swap_digest(session, hostname, expected, digest):
    """Compare-and-swap the host's digest from ``expected`` (None: the
    host has none yet) to ``digest``; StaleReport if it changed. Done
    first in a report's transaction, it also makes a concurrent report
    of the host wait for this one's commit (the row's lock), then fail
    its own swap."""
    done = session.execute(
        sa.update(models.HostReport)
        .where(models.HostReport.hostname == hostname,
               models.HostReport.digest == expected)
        .values(digest=digest)).rowcount
    if done:
        return
    if expected is not None:
        raise StaleReport(hostname)
    session.add(models.HostReport(hostname=hostname, digest=digest))
    try:
        session.flush()
    except db_exc.DBDuplicateEntry:
        raise StaleReport(hostname) from None


def reserved_deployables(db, hostname):
    """Names of the host's deployables whose inventory is reserved in
    full: those of a disabled device (``maintaining``), and those of a
    device that vanished from the host while an ARQ holds one of its
    handles (nothing more is scheduled on a card that is gone)."""
    with db.reader() as session:
        return set(session.scalars(
            sa.select(models.Deployable.name)
            .join(models.Device,
                  models.Device.id == models.Deployable.device_id)
            .where(models.Device.hostname == hostname,
                   sa.or_(models.Device.status == 'maintaining',
                          models.Device.vanished.is_(True)))))


def load_host(db, hostname):
    """``[DriverDevice]`` of a host as stored."""
    with db.reader() as session:
        devices = list(session.scalars(sa.select(models.Device).where(
            models.Device.hostname == hostname)))
        if not devices:
            return []
        dev_ids = [d.id for d in devices]
        cpids = {c.device_id: c for c in session.scalars(
            sa.select(models.ControlpathID)
            .where(models.ControlpathID.device_id.in_(dev_ids)))}
        deps = list(session.scalars(
            sa.select(models.Deployable)
            .where(models.Deployable.device_id.in_(dev_ids))
            .order_by(models.Deployable.id)))
        dep_ids = [d.id for d in deps]
        attrs = collections.defaultdict(list)
        for a in session.scalars(sa.select(models.Attribute).where(
                models.Attribute.deployable_id.in_(dep_ids))
                .order_by(models.Attribute.id)):
            attrs[a.deployable_id].append(
                model.DriverAttribute(key=a.key, value=a.value))
        handles = collections.defaultdict(list)
        for h in session.scalars(sa.select(models.AttachHandle).where(
                models.AttachHandle.deployable_id.in_(dep_ids))
                .order_by(models.AttachHandle.id)):
            handles[h.deployable_id].append(model.DriverAttachHandle(
                attach_type=h.attach_type, attach_info=h.attach_info))
    by_device = collections.defaultdict(list)
    for d in deps:
        by_device[d.device_id].append(model.DriverDeployable(
            name=d.name, num_accelerators=d.num_accelerators,
            driver_name=d.driver_name, attributes=tuple(attrs[d.id]),
            attach_handles=tuple(handles[d.id])))
    return [model.DriverDevice(
        type=d.type, vendor=d.vendor, model=d.model,
        controlpath_type=cpids[d.id].cpid_type,
        controlpath_info=cpids[d.id].cpid_info,
        std_board_info=d.std_board_info or '{}',
        vendor_board_info=d.vendor_board_info or '',
        deployables=tuple(by_device[d.id])) for d in devices]


def _new_uuid():
    return uuidutils.generate_uuid()


def _ids_by_uuid(session, model_cls, uuids):
    """``{uuid: id}`` of rows just inserted, in one read: MySQL has no
    INSERT ... RETURNING for many rows."""
    return dict(session.execute(sa.select(model_cls.uuid, model_cls.id)
                                .where(model_cls.uuid.in_(uuids))).all())


def _add_deployables(session, placed, rp_uuid_of):
    """Insert deployables with their attributes and handles: ``placed``
    is ``[(device_id, cpid_id, DriverDeployable)]``. One INSERT per
    table and one read of the new ids, however many there are."""
    if not placed:
        return
    uuids = [_new_uuid() for _ in placed]
    session.execute(sa.insert(models.Deployable), [
        {'uuid': uuid, 'name': dep.name,
         'num_accelerators': dep.num_accelerators, 'device_id': device_id,
         'driver_name': dep.driver_name, 'rp_uuid': rp_uuid_of(dep.name)}
        for uuid, (device_id, _cpid_id, dep) in zip(uuids, placed,
                                                    strict=True)])
    ids = _ids_by_uuid(session, models.Deployable, uuids)
    attributes, handles = [], []
    for uuid, (_device_id, cpid_id, dep) in zip(uuids, placed, strict=True):
        attributes += [{'uuid': _new_uuid(), 'deployable_id': ids[uuid],
                        'key': attr.key, 'value': attr.value}
                       for attr in dep.attributes]
        handles += _handle_rows(ids[uuid], cpid_id, dep.attach_handles)
    if attributes:
        session.execute(sa.insert(models.Attribute), attributes)
    if handles:
        session.execute(sa.insert(models.AttachHandle), handles)


def _handle_rows(deployable_id, cpid_id, handles):
    return [{'uuid': _new_uuid(), 'deployable_id': deployable_id,
             'cpid_id': cpid_id, 'attach_type': h.attach_type,
             'attach_info': h.attach_info, 'in_use': False}
            for h in handles]


def _add_handles(session, deployable_id, cpid_id, handles):
    if handles:
        session.execute(sa.insert(models.AttachHandle),
                        _handle_rows(deployable_id, cpid_id, handles))


def _add_devices(session, hostname, devices, rp_uuid_of):
    """Insert a host's new devices, with their control paths,
    deployables, attributes and handles, in a few statements however
    many there are (a host's first report, or one after a database
    restore, adds them all). A device the host has already (a report
    applied meanwhile) is left as it is."""
    if not devices:
        return
    stored = set(session.scalars(
        sa.select(models.ControlpathID.cpid_info)
        .join(models.Device,
              models.Device.id == models.ControlpathID.device_id)
        .where(models.Device.hostname == hostname,
               models.ControlpathID.cpid_info.in_(
                   [d.controlpath_info for d in devices]))))
    devices = [d for d in devices if d.controlpath_info not in stored]
    if not devices:
        return
    device_uuids = [_new_uuid() for _ in devices]
    session.execute(sa.insert(models.Device), [
        {'uuid': uuid, 'type': dev.type, 'vendor': dev.vendor,
         'model': dev.model, 'std_board_info': dev.std_board_info,
         'vendor_board_info': dev.vendor_board_info, 'hostname': hostname,
         'status': 'enabled'}
        for uuid, dev in zip(device_uuids, devices, strict=True)])
    device_ids = _ids_by_uuid(session, models.Device, device_uuids)
    cpid_uuids = [_new_uuid() for _ in devices]
    session.execute(sa.insert(models.ControlpathID), [
        {'uuid': cpid_uuid, 'device_id': device_ids[device_uuid],
         'cpid_type': dev.controlpath_type,
         'cpid_info': dev.controlpath_info}
        for cpid_uuid, device_uuid, dev in zip(cpid_uuids, device_uuids,
                                               devices, strict=True)])
    cpid_ids = _ids_by_uuid(session, models.ControlpathID, cpid_uuids)
    _add_deployables(session, [
        (device_ids[device_uuid], cpid_ids[cpid_uuid], dep)
        for device_uuid, cpid_uuid, dev in zip(device_uuids, cpid_uuids,
                                               devices, strict=True)
        for dep in dev.deployables], rp_uuid_of)


def _device_row(session, hostname, cpid_info):
    return session.execute(
        sa.select(models.Device, models.ControlpathID.id)
        .join(models.ControlpathID,
              models.ControlpathID.device_id == models.Device.id)
        .where(models.Device.hostname == hostname,
               models.ControlpathID.cpid_info == cpid_info)).first()


def _in_use(session, deployable_ids):
    if not deployable_ids:
        return False
    return session.scalar(sa.select(models.AttachHandle.id).where(
        models.AttachHandle.deployable_id.in_(deployable_ids),
        models.AttachHandle.in_use.is_(True)).limit(1)) is not None


def _delete_deployables(session, deployable_ids):
    for table in (models.Attribute, models.AttachHandle):
        session.execute(sa.delete(table).where(
            table.deployable_id.in_(deployable_ids)))
    session.execute(sa.delete(models.Deployable).where(
        models.Deployable.id.in_(deployable_ids)))


def _remove_device(session, hostname, dev):
    """Delete a device's rows, or mark it vanished while in use.
    Returns True when it was deleted."""
    found = _device_row(session, hostname, dev.controlpath_info)
    if found is None:
        return True
    device, _ = found
    dep_ids = list(session.scalars(sa.select(models.Deployable.id).where(
        models.Deployable.device_id == device.id)))
    if _in_use(session, dep_ids):
        device.vanished = True
        return False
    _delete_deployables(session, dep_ids)
    session.execute(sa.delete(models.ControlpathID).where(
        models.ControlpathID.device_id == device.id))
    session.delete(device)
    return True


def _change_device(session, hostname, change, rp_uuid_of) -> bool:
    """Apply a device's change; False if a removal had to wait for an
    ARQ to let go of a handle."""
    complete = True
    device, cpid_id = _device_row(session, hostname,
                                  change.new.controlpath_info)
    if change.columns_changed:
        for field in ('type', 'vendor', 'model', 'std_board_info',
                      'vendor_board_info'):
            setattr(device, field, getattr(change.new, field))
    _add_deployables(session, [(device.id, cpid_id, dep)
                               for dep in change.deployables_added],
                     rp_uuid_of)
    if change.deployables_removed:
        names = [d.name for d in change.deployables_removed]
        ids = list(session.scalars(sa.select(models.Deployable.id).where(
            models.Deployable.device_id == device.id,
            models.Deployable.name.in_(names))))
        if not _in_use(session, ids):
            _delete_deployables(session, ids)
        else:
            complete = False
    for dep_change in change.deployables_changed:
        complete &= _change_deployable(session, device.id, cpid_id,
                                       dep_change)
    return complete


def _change_deployable(session, device_id, cpid_id, change) -> bool:
    row = session.scalars(sa.select(models.Deployable).where(
        models.Deployable.device_id == device_id,
        models.Deployable.name == change.new.name)).one()
    if change.columns_changed:
        row.num_accelerators = change.new.num_accelerators
        row.driver_name = change.new.driver_name
    if change.attributes_changed:
        session.execute(sa.delete(models.Attribute).where(
            models.Attribute.deployable_id == row.id))
        if change.new.attributes:
            session.execute(sa.insert(models.Attribute), [
                {'uuid': _new_uuid(), 'deployable_id': row.id,
                 'key': attr.key, 'value': attr.value}
                for attr in change.new.attributes])
    _add_handles(session, row.id, cpid_id, change.handles_added)
    removed = [h.attach_info for h in change.handles_removed]
    complete = True
    if removed:
        # A handle in use stays until its ARQ lets it go.
        complete = session.execute(sa.delete(models.AttachHandle).where(
            models.AttachHandle.deployable_id == row.id,
            models.AttachHandle.attach_info.in_(removed),
            models.AttachHandle.in_use.is_(False))).rowcount == len(removed)
    for handle in change.handle_types_changed:
        session.execute(sa.update(models.AttachHandle).where(
            models.AttachHandle.deployable_id == row.id,
            models.AttachHandle.attach_info == handle.attach_info)
            .values(attach_type=handle.attach_type))
    return complete


@engine.retry_on_conflict()
def apply_diff(db, hostname, diff, digest, rp_uuid_of, reported_cpids=(),
               diffed_digest=None):
    """Write a host diff and the new digest in one transaction.

    ``diffed_digest`` is the host's digest when the stored devices that
    the diff was made from were read (None: the host had none); if
    another report changed it since, nothing is written and StaleReport
    is raised, so that two reports of one host (two conductors, or an
    agent that sent again) never both apply a diff of the same state.
    ``rp_uuid_of(name)`` gives a new deployable's resource provider uuid;
    ``reported_cpids`` are the devices in the report, which are no longer
    vanished if they were.
    Returns what it did beside the diff: ``Applied``.
    """
    kept = []
    with db.writer() as session:
        _swap_digest(session, hostname, diffed_digest, digest)
        _add_devices(session, hostname, diff.added, rp_uuid_of)
        for dev in diff.removed:
            if not _remove_device(session, hostname, dev):
                kept.append(dev)
        complete = True
        for change in diff.changed:
            complete &= _change_device(session, hostname, change,
                                       rp_uuid_of)
        if not complete:
            # A handle or deployable the report no longer has stays
            # while an ARQ holds it: the host is not yet as reported, so
            # the next report, even unchanged, is diffed again and
            # removes it once the ARQ has let go.
            digest = pending_digest()
            session.execute(sa.update(models.HostReport)
                            .where(models.HostReport.hostname == hostname)
                            .values(digest=digest))
        returned = _unmark_vanished(session, hostname, list(reported_cpids))
    return Applied(kept, returned, digest)


@dataclasses.dataclass
class Applied:
    """What ``apply_diff`` did beside writing the diff.

    ``kept``: the removed devices that stay, marked vanished, because one
    of their handles is in use. ``returned``: the names of the
    deployables of vanished devices that the report has again, and
    that are not disabled (their inventory can be freed). ``digest``:
    the host's digest as written.
    """

    kept: list
    returned: list
    digest: str


def _unmark_vanished(session, hostname, cpid_infos):
    """Devices of ``cpid_infos`` are no longer vanished; returns the
    names of those devices' deployables, unless disabled."""
    if not cpid_infos:
        return []
    ids = sa.select(models.ControlpathID.device_id).where(
        models.ControlpathID.cpid_info.in_(cpid_infos))
    back = sa.select(models.Device.id).where(
        models.Device.hostname == hostname, models.Device.vanished.is_(True),
        models.Device.id.in_(ids))
    names = list(session.scalars(
        sa.select(models.Deployable.name)
        .join(models.Device, models.Device.id == models.Deployable.device_id)
        .where(models.Device.id.in_(back),
               models.Device.status != 'maintaining')))
    session.execute(sa.update(models.Device).where(
        models.Device.hostname == hostname, models.Device.vanished.is_(True),
        models.Device.id.in_(ids)).values(vanished=False))
    return names


@engine.retry_on_conflict()
def purge_vanished(db):
    """Delete vanished devices none of whose handles is in use any more.
    Returns the names of the deployables deleted (for Placement).

    The digest of each host a device is purged from is made pending in
    the same transaction: a report of the host diffed before the purge
    (which still saw the device) fails its compare-and-swap and is
    diffed again, so that a device that came back is added again."""
    names = []
    with db.writer() as session:
        for device in list(session.scalars(sa.select(models.Device).where(
                models.Device.vanished.is_(True)))):
            deps = list(session.scalars(sa.select(models.Deployable).where(
                models.Deployable.device_id == device.id)))
            if _in_use(session, [d.id for d in deps]):
                continue
            names.extend(d.name for d in deps)
            _delete_deployables(session, [d.id for d in deps])
            session.execute(sa.delete(models.ControlpathID).where(
                models.ControlpathID.device_id == device.id))
            session.delete(device)
            session.execute(sa.update(models.HostReport)
                            .where(models.HostReport.hostname ==
                                   device.hostname)
                            .values(digest=pending_digest()))
    return names
