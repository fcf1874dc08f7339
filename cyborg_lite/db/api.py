"""Context-first database functions for device profiles and ARQs.

Every function takes the :class:`~cyborg_lite.db.engine.Database` first
and returns plain dicts in the shape the API serves (less the links), so
that nothing above this module sees an ORM object. Only the conductor
imports this module.

ARQ state changes and attach-handle allocation are compare-and-swap
UPDATEs checked by rowcount (see :mod:`cyborg_lite.states`); a lost race
raises :class:`~cyborg_lite.db.engine.RetryTransaction` or a domain error.
"""

import json

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg_lite import exception
from cyborg_lite import profiles
from cyborg_lite import states
from cyborg_lite.db import engine
from cyborg_lite.db import models


def isotime(value):
    """ISO 8601 with an explicit UTC offset, or None."""
    if value is None:
        return None
    return value.strftime('%Y-%m-%dT%H:%M:%S.%f') + '+00:00'


# --- device profiles --------------------------------------------------

def _dp_to_dict(row: models.DeviceProfile) -> dict:
    return {'uuid': row.uuid, 'name': row.name,
            'description': row.description,
            'groups': json.loads(row.profile_json)['groups'],
            'created_at': isotime(row.created_at),
            'updated_at': isotime(row.updated_at)}


def device_profile_create(db, name, groups, description=None, uuid=None):
    row = models.DeviceProfile(
        uuid=uuid or uuidutils.generate_uuid(), name=name,
        description=description,
        profile_json=json.dumps({'groups': groups}))
    try:
        with db.writer() as session:
            _raise_if_dp_exists(session, row.name, row.uuid)
            session.add(row)
    except db_exc.DBDuplicateEntry as exc:
        if 'uuid' in (exc.columns or []):
            raise exception.DuplicateDeviceProfileUUID(uuid=row.uuid)
        raise exception.DuplicateDeviceProfileName(name=row.name)
    return _dp_to_dict(row)


def _raise_if_dp_exists(session, name, uuid):
    found = session.execute(
        sa.select(models.DeviceProfile.name, models.DeviceProfile.uuid)
        .where(sa.or_(models.DeviceProfile.name == name,
                      models.DeviceProfile.uuid == uuid))).first()
    if found is None:
        return
    if found.name == name:
        raise exception.DuplicateDeviceProfileName(name=name)
    raise exception.DuplicateDeviceProfileUUID(uuid=uuid)


def device_profile_list(db, names=None):
    query = sa.select(models.DeviceProfile).order_by(models.DeviceProfile.id)
    if names is not None:
        query = query.where(models.DeviceProfile.name.in_(names))
    with db.reader() as session:
        return [_dp_to_dict(r) for r in session.scalars(query)]


def device_profile_get(db, uuid=None, name=None):
    column = (models.DeviceProfile.uuid if uuid is not None
              else models.DeviceProfile.name)
    ident = uuid if uuid is not None else name
    with db.reader() as session:
        row = session.scalars(sa.select(models.DeviceProfile)
                              .where(column == ident)).first()
    if row is None:
        raise exception.DeviceProfileNotFound(ident=ident)
    return _dp_to_dict(row)


@engine.retry_on_conflict()
def device_profile_delete(db, uuids=(), names=()):
    """Delete every profile named; all must exist and be unused, else
    nothing is deleted."""
    dp = models.DeviceProfile
    with db.writer() as session:
        rows = list(session.scalars(sa.select(dp).where(
            sa.or_(dp.uuid.in_(list(uuids)), dp.name.in_(list(names))))))
        found = {r.uuid for r in rows} | {r.name for r in rows}
        for ident in list(uuids) + list(names):
            if ident not in found:
                raise exception.DeviceProfileNotFound(ident=ident)
        for row in rows:
            count = session.scalar(
                sa.select(sa.func.count(models.ExtArq.id))
                .where(models.ExtArq.device_profile_id == row.id))
            if count:
                raise exception.DeviceProfileInUse(name=row.name,
                                                   count=count)
            session.delete(row)


# --- ARQs: reading ----------------------------------------------------

_ARQ_COLUMNS = (models.ExtArq, models.DeviceProfile.name,
                models.AttachHandle)


def _arq_query():
    return (sa.select(*_ARQ_COLUMNS)
            .join(models.DeviceProfile,
                  models.ExtArq.device_profile_id == models.DeviceProfile.id)
            .outerjoin(models.AttachHandle,
                       models.ExtArq.attach_handle_id ==
                       models.AttachHandle.id)
            .order_by(models.ExtArq.id))


def arq_to_dict(arq, dp_name, handle) -> dict:
    """The wire form of an ARQ. Attach-handle fields are filled only in
    state Bound, as upstream does."""
    bound = arq.state == states.BOUND and handle is not None
    return {'uuid': arq.uuid, 'state': arq.state,
            'device_profile_name': dp_name,
            'device_profile_group_id': arq.device_profile_group_id,
            'hostname': arq.hostname, 'device_rp_uuid': arq.device_rp_uuid,
            'instance_uuid': arq.instance_uuid,
            'project_id': arq.project_id,
            'attach_handle_type': handle.attach_type if bound else '',
            'attach_handle_info': (json.loads(handle.attach_info)
                                   if bound else {}),
            'attach_handle_uuid': handle.uuid if bound else None,
            'created_at': isotime(arq.created_at),
            'updated_at': isotime(arq.updated_at)}


def _scoped(query, project_id):
    """Limit a query to one project's ARQs; None means every project."""
    if project_id is None:
        return query
    return query.where(models.ExtArq.project_id == project_id)


def arq_list(db, project_id=None, instance_uuid=None, uuids=None):
    query = _scoped(_arq_query(), project_id)
    if instance_uuid is not None:
        query = query.where(models.ExtArq.instance_uuid == instance_uuid)
    if uuids is not None:
        query = query.where(models.ExtArq.uuid.in_(list(uuids)))
    with db.reader() as session:
        return [arq_to_dict(*row) for row in session.execute(query)]


def arq_get(db, uuid, project_id=None):
    query = _scoped(_arq_query(), project_id).where(
        models.ExtArq.uuid == uuid)
    with db.reader() as session:
        row = session.execute(query).first()
    if row is None:
        raise exception.ARQNotFound(uuid=uuid)
    return arq_to_dict(*row)


def arqs_stuck(db, older_than):
    """ARQs in BindStarted whose last change is older than a datetime."""
    query = _arq_query().where(models.ExtArq.state == states.BIND_STARTED,
                               models.ExtArq.updated_at < older_than)
    with db.reader() as session:
        return [arq_to_dict(*row) for row in session.execute(query)]


# --- ARQs: creating and deleting --------------------------------------

@engine.retry_on_conflict()
def arq_create(db, device_profile_name, group_counts, project_id):
    """Create ``group_counts[i]`` ARQs for group ``i`` of a profile; with
    ``group_counts`` None, as many as each group asks for."""
    with db.writer() as session:
        dp = session.scalars(sa.select(models.DeviceProfile).where(
            models.DeviceProfile.name == device_profile_name)).first()
        if dp is None:
            raise exception.DeviceProfileNotFound(ident=device_profile_name)
        if group_counts is None:
            group_counts = profiles.arq_counts(
                json.loads(dp.profile_json)['groups'])
        rows = [models.ExtArq(uuid=uuidutils.generate_uuid(),
                              state=states.INITIAL, device_profile_id=dp.id,
                              device_profile_group_id=group_id,
                              project_id=project_id)
                for group_id, count in enumerate(group_counts)
                for _ in range(count)]
        session.add_all(rows)
        session.flush()
        return [arq_to_dict(row, dp.name, None) for row in rows]


@engine.retry_on_conflict()
def arq_delete(db, arq_uuids):
    """Delete ARQs and release their attach handles, in one transaction.
    Returns whether a released handle belongs to a vanished device,
    which can now be purged."""
    with db.writer() as session:
        handle_ids = list(session.scalars(
            sa.select(models.ExtArq.attach_handle_id).where(
                models.ExtArq.uuid.in_(list(arq_uuids)),
                models.ExtArq.attach_handle_id.is_not(None))))
        session.execute(sa.delete(models.ExtArq).where(
            models.ExtArq.uuid.in_(list(arq_uuids))))
        return release_handles(session, handle_ids)


def release_handles(session, handle_ids) -> bool:
    """Free attach handles; True if one belongs to a vanished device."""
    if not handle_ids:
        return False
    session.execute(sa.update(models.AttachHandle)
                    .where(models.AttachHandle.id.in_(handle_ids))
                    .values(in_use=False))
    vanished = (sa.select(models.AttachHandle.id)
                .join(models.Deployable, models.AttachHandle.deployable_id ==
                      models.Deployable.id)
                .join(models.Device,
                      models.Deployable.device_id == models.Device.id)
                .where(models.AttachHandle.id.in_(handle_ids),
                       models.Device.vanished.is_(True)).limit(1))
    return session.scalar(vanished) is not None


def arqs_with_handles(db, project_id=None, instance_uuid=None, uuids=None):
    """``[{uuid, instance_uuid, hostname, handle}]``, ``handle`` being the
    attach handle an ARQ holds in any state (None if none): what an
    unbind or delete must undo on the host."""
    query = _scoped(
        sa.select(models.ExtArq.uuid, models.ExtArq.instance_uuid,
                  models.ExtArq.hostname, models.AttachHandle)
        .outerjoin(models.AttachHandle, models.ExtArq.attach_handle_id ==
                   models.AttachHandle.id), project_id)
    if instance_uuid is not None:
        query = query.where(models.ExtArq.instance_uuid == instance_uuid)
    if uuids is not None:
        query = query.where(models.ExtArq.uuid.in_(list(uuids)))
    with db.reader() as session:
        return [{'uuid': uuid, 'instance_uuid': instance, 'hostname': host,
                 'handle': handle_dict(handle) if handle else None}
                for uuid, instance, host, handle in session.execute(query)]


def handle_dict(handle) -> dict:
    return {'id': handle.id, 'uuid': handle.uuid,
            'attach_type': handle.attach_type,
            'attach_info': json.loads(handle.attach_info)}
