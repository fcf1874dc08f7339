"""Context-first database functions for device profiles and ARQs.

Every function takes the ``Database`` first
and returns plain dicts in the shape the API serves (less the links), so
that nothing above this module sees an ORM object. Only the conductor
imports this module.

ARQ state changes and attach-handle allocation are compare-and-swap
UPDATEs checked by rowcount (see ``cyborg_lite.states``); a lost race
raises ``RetryTransaction`` or a domain error.
"""

import dataclasses
import functools
import hashlib
import json
import types
import uuid as uuid_lib

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg_lite import exception
from cyborg_lite import model
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


# How often a profile delete counts again after an ARQ of the profile
# was created between its count and its delete.
_PROFILE_DELETE_ATTEMPTS = 5


def device_profile_delete(db, uuids=(), names=()):
    """Delete every profile named; all must exist and be unused, else
    nothing is deleted.

    An ARQ created between the count of a profile's ARQs and the delete
    makes the foreign key refuse the delete: the transaction runs again
    and counts it (DeviceProfileInUse), instead of a 500.
    """
    for attempt in range(1, _PROFILE_DELETE_ATTEMPTS + 1):
        try:
            return _delete_profiles(db, uuids, names)
        except db_exc.DBReferenceError:
            if attempt == _PROFILE_DELETE_ATTEMPTS:
                raise exception.Conflict(
                    reason='Accelerator requests of the device profiles '
                           'keep being created; delete them first.')


@engine.retry_on_conflict()
def _delete_profiles(db, uuids, names):
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


# --- ARQs -------------------------------------------------------------
#
# Every ARQ lifecycle Nova drives (create, bind, list until resolved,
# delete) runs through the functions below and cyborg_lite.db.binding, so
# they use Core connections and statements built once, with bound
# parameters: an ORM session and a statement built per call cost more
# CPU than the SQL they send.

ARQS = models.ExtArq.__table__
PROFILES = models.DeviceProfile.__table__
HANDLES = models.AttachHandle.__table__
DEPLOYABLES = models.Deployable.__table__
DEVICES = models.Device.__table__

_ARQ_SELECT = (
    sa.select(ARQS.c.uuid, ARQS.c.state, ARQS.c.device_profile_group_id,
              ARQS.c.hostname, ARQS.c.device_rp_uuid,
              ARQS.c.instance_uuid, ARQS.c.project_id, ARQS.c.created_at,
              ARQS.c.updated_at,
              PROFILES.c.name.label('device_profile_name'),
              HANDLES.c.uuid.label('handle_uuid'), HANDLES.c.attach_type,
              HANDLES.c.attach_info)
    .select_from(ARQS.join(PROFILES, ARQS.c.device_profile_id ==
                           PROFILES.c.id)
                 .outerjoin(HANDLES, ARQS.c.attach_handle_id ==
                            HANDLES.c.id))
    .order_by(ARQS.c.id))

# What deleting or unbinding an ARQ must undo: its handle (in any state)
# and whether that handle's device has vanished from its host.
_HELD_SELECT = (
    sa.select(ARQS.c.id, ARQS.c.uuid, ARQS.c.state, ARQS.c.instance_uuid,
              ARQS.c.hostname, ARQS.c.attach_handle_id,
              HANDLES.c.uuid.label('handle_uuid'), HANDLES.c.attach_type,
              HANDLES.c.attach_info, DEVICES.c.vanished)
    .select_from(ARQS.outerjoin(HANDLES, ARQS.c.attach_handle_id ==
                                HANDLES.c.id)
                 .outerjoin(DEPLOYABLES, HANDLES.c.deployable_id ==
                            DEPLOYABLES.c.id)
                 .outerjoin(DEVICES, DEPLOYABLES.c.device_id ==
                            DEVICES.c.id))
    .order_by(ARQS.c.id))

_FILTERS = {
    'project_id': ARQS.c.project_id == sa.bindparam('project_id'),
    'instance_uuid': ARQS.c.instance_uuid == sa.bindparam('instance_uuid'),
    'uuids': ARQS.c.uuid.in_(sa.bindparam('uuids', expanding=True)),
}

_PROFILE_BY_NAME = (
    sa.select(PROFILES.c.id, PROFILES.c.name, PROFILES.c.profile_json)
    .where(PROFILES.c.name == sa.bindparam('name')))

# The ARQ of a profile that asks for one accelerator, inserted in one
# statement that finds the profile by name and content (see
# ``_create_from_known_profile``).
_ONE_ARQ_COLUMNS = ('uuid', 'state', 'substate', 'project_id', 'created_at')
_INSERT_ONE_FROM_PROFILE = ARQS.insert().from_select(
    _ONE_ARQ_COLUMNS + ('device_profile_id', 'device_profile_group_id'),
    sa.select(*(sa.bindparam(name, type_=ARQS.c[name].type)
                for name in _ONE_ARQ_COLUMNS),
              PROFILES.c.id, sa.literal(0, sa.Integer))
    .where(PROFILES.c.name == sa.bindparam('name'),
           PROFILES.c.profile_json == sa.bindparam('profile_json'))
).execution_options(preserve_rowcount=True)   # for an INSERT, not kept
# Profiles a Database remembers (see Database.known_profiles), at most.
KNOWN_PROFILES_MAX = 1024

_DELETE_IF_UNCHANGED = sa.delete(ARQS).where(
    ARQS.c.id == sa.bindparam('arq_id'),
    ARQS.c.state == sa.bindparam('seen_state'),
    ARQS.c.attach_handle_id.is_not_distinct_from(
        sa.bindparam('seen_handle', type_=ARQS.c.attach_handle_id.type)))

RELEASE_HANDLES = (
    sa.update(HANDLES)
    .where(HANDLES.c.id.in_(sa.bindparam('handle_ids', expanding=True)))
    .values(in_use=False))

_VANISHED_AMONG = (
    sa.select(HANDLES.c.id)
    .join(DEPLOYABLES, HANDLES.c.deployable_id == DEPLOYABLES.c.id)
    .join(DEVICES, DEPLOYABLES.c.device_id == DEVICES.c.id)
    .where(HANDLES.c.id.in_(sa.bindparam('handle_ids', expanding=True)),
           DEVICES.c.vanished.is_(True))
    .limit(1))


@functools.cache
def _filtered(base, names):
    """``base`` limited by the filters named (a sorted tuple), built once
    per combination."""
    return base.where(*(_FILTERS[name] for name in names))


def _scope(base, project_id=None, instance_uuid=None, uuids=None):
    """The statement and parameters selecting the ARQs in scope;
    ``project_id`` None means every project."""
    params = {name: value for name, value in (
        ('project_id', project_id), ('instance_uuid', instance_uuid),
        ('uuids', None if uuids is None else list(uuids)))
        if value is not None}
    return _filtered(base, tuple(sorted(params))), params


def arq_to_dict(row) -> dict:
    """The wire form of an ARQ from a row of ``_ARQ_SELECT``'s columns.
    Attach-handle fields are filled only in state Bound, as upstream
    does."""
    bound = row.state == states.BOUND and row.handle_uuid is not None
    return {'uuid': row.uuid, 'state': row.state,
            'device_profile_name': row.device_profile_name,
            'device_profile_group_id': row.device_profile_group_id,
            'hostname': row.hostname, 'device_rp_uuid': row.device_rp_uuid,
            'instance_uuid': row.instance_uuid,
            'project_id': row.project_id,
            'attach_handle_type': row.attach_type if bound else '',
            'attach_handle_info': (json.loads(row.attach_info)
                                   if bound else {}),
            'attach_handle_uuid': row.handle_uuid if bound else None,
            'created_at': isotime(row.created_at),
            'updated_at': isotime(row.updated_at)}


def arq_list(db, project_id=None, instance_uuid=None, uuids=None):
    query, params = _scope(_ARQ_SELECT, project_id, instance_uuid, uuids)
    with db.read_connection() as conn:
        return [arq_to_dict(row) for row in conn.execute(query, params)]


def arq_get(db, uuid, project_id=None):
    query, params = _scope(_ARQ_SELECT, project_id, uuids=[uuid])
    with db.read_connection() as conn:
        row = conn.execute(query, params).first()
    if row is None:
        raise exception.ARQNotFound(uuid=uuid)
    return arq_to_dict(row)


def arqs_stuck(db, older_than):
    """ARQs in BindStarted whose last change is older than a datetime."""
    query = _ARQ_SELECT.where(ARQS.c.state == states.BIND_STARTED,
                              ARQS.c.updated_at < older_than)
    with db.read_connection() as conn:
        return [arq_to_dict(row) for row in conn.execute(query)]


class _CreatedBefore(Exception):
    """An ARQ create found its ARQs made by an earlier call with the same
    idempotency key: ``rows`` are the ones it meant to insert."""

    def __init__(self, rows):
        super().__init__()
        self.rows = rows


@engine.retry_on_conflict()
def arq_create(db, device_profile_name, group_counts, project_id,
               idempotency_key=None):
    """Create ``group_counts[i]`` ARQs for group ``i`` of a profile; with
    ``group_counts`` None, as many as each group asks for.

    The ARQs are one INSERT, so it needs no transaction around it: the
    foreign key refuses it if the profile was deleted after it was read.
    Once a process has read a profile that asks for one accelerator,
    its creates are one INSERT ... SELECT and no read
    (``_create_from_known_profile``).

    With an ``idempotency_key``, the ARQs' UUIDs derive from it
    (``idempotent_uuid``), so a create repeated with the same key
    (its first answer was lost) finds that its ARQs exist, as the unique
    UUIDs say, and returns them as they are now instead of creating
    more.
    """
    try:
        return _insert_arqs(db, device_profile_name, group_counts,
                            project_id, idempotency_key)
    except _CreatedBefore as before:
        return _created_before(db, before.rows, project_id)


def _insert_arqs(db, device_profile_name, group_counts, project_id,
                 idempotency_key):
    with db.autocommit_connection() as conn:
        if group_counts is None:
            arq = _create_from_known_profile(db, conn, device_profile_name,
                                             project_id, idempotency_key)
            if arq is not None:
                return [arq]
        dp = conn.execute(_PROFILE_BY_NAME,
                          {'name': device_profile_name}).first()
        if dp is None:
            raise exception.DeviceProfileNotFound(ident=device_profile_name)
        if group_counts is None:
            group_counts = profiles.arq_counts(
                json.loads(dp.profile_json)['groups'])
            _remember_profile(db, dp, group_counts)
        rows = _new_arq_rows(group_counts, project_id, dp.id,
                             idempotency_key)
        if rows:
            try:
                conn.execute(ARQS.insert(), rows)
            except db_exc.DBReferenceError:
                raise exception.DeviceProfileNotFound(
                    ident=device_profile_name)
            except db_exc.DBDuplicateEntry:
                if idempotency_key is None:
                    raise
                raise _CreatedBefore(rows)
    return _created_arqs(rows, dp.name)


def idempotent_uuid(key, index):
    """The UUID of the ``index``-th ARQ created with ``key``: random
    looking (a version 4 UUID) but the same for the same key and index.
    """
    digest = hashlib.sha256(('%s/%d' % (key, index)).encode()).digest()
    return str(uuid_lib.UUID(bytes=digest[:16], version=4))


def _new_arq_rows(group_counts, project_id, device_profile_id=None,
                  idempotency_key=None):
    """The rows of new ARQs: ``group_counts[i]`` for group ``i``; their
    UUIDs derive from ``idempotency_key`` when given."""
    now = timeutils.utcnow()
    rows = [{'uuid': None, 'state': states.INITIAL,
             'substate': states.INITIAL,
             'device_profile_id': device_profile_id,
             'device_profile_group_id': group_id, 'hostname': None,
             'device_rp_uuid': None, 'instance_uuid': None,
             'project_id': project_id, 'created_at': now,
             'updated_at': None}
            for group_id, count in enumerate(group_counts)
            for _ in range(count)]
    for index, row in enumerate(rows):
        row['uuid'] = (uuidutils.generate_uuid() if idempotency_key is None
                       else idempotent_uuid(idempotency_key, index))
    return rows


def _created_before(db, rows, project_id):
    """The ARQs of ``rows`` as stored, created by an earlier call with
    the same idempotency key."""
    uuids = [row['uuid'] for row in rows]
    stored = {a['uuid']: a for a in arq_list(db, uuids=uuids)}
    if set(stored) != set(uuids) or any(
            a['project_id'] != project_id for a in stored.values()):
        # Not all of them, or another project's: not what this key
        # created, or deleted since.
        raise exception.Conflict(
            reason='Accelerator requests of this idempotency key exist '
                   'and differ from the ones asked for.')
    return [stored[uuid] for uuid in uuids]


def _created_arqs(rows, profile_name):
    """The wire form of the ARQs just inserted as ``rows``."""
    return [arq_to_dict(types.SimpleNamespace(
        **row, device_profile_name=profile_name, handle_uuid=None,
        attach_type=None, attach_info=None)) for row in rows]


def _remember_profile(db, dp, group_counts):
    """Remember a profile that asks for one accelerator (see
    ``_create_from_known_profile``); forget any other."""
    if list(group_counts) != [1]:
        db.known_profiles.pop(dp.name, None)
        return
    if len(db.known_profiles) >= KNOWN_PROFILES_MAX:
        db.known_profiles.clear()
    db.known_profiles[dp.name] = dp.profile_json


def _create_from_known_profile(db, conn, name, project_id,
                               idempotency_key=None):
    """The ARQ of profile ``name`` created in one statement, if this
    process remembers the profile (one that asks for one accelerator);
    None otherwise, and when the profile is no longer the one read.

    The INSERT ... SELECT finds the profile by its name and its groups
    as they were read: a profile deleted since, or created again under
    the same name with other groups, selects no row, is forgotten, and
    is read again by the caller. That saves the read of the profile, a
    database round trip, on the create of every ARQ lifecycle.
    """
    profile_json = db.known_profiles.get(name)
    if profile_json is None:
        return None
    rows = _new_arq_rows([1], project_id, idempotency_key=idempotency_key)
    try:
        inserted = conn.execute(_INSERT_ONE_FROM_PROFILE, dict(
            rows[0], name=name, profile_json=profile_json)).rowcount
    except db_exc.DBReferenceError:
        inserted = 0    # deleted between the SELECT and the insert
    except db_exc.DBDuplicateEntry:
        if idempotency_key is None:
            raise
        raise _CreatedBefore(rows)
    if inserted != 1:
        db.known_profiles.pop(name, None)
        return None
    return _created_arqs(rows, name)[0]


def held_dict(row) -> dict:
    """An ARQ's uuid, instance, host and the handle it holds (None if
    none), from a row of ``_HELD_SELECT``."""
    handle = None
    if row.attach_handle_id is not None:
        handle = handle_dict(row.attach_handle_id, row)
    return {'uuid': row.uuid, 'instance_uuid': row.instance_uuid,
            'hostname': row.hostname, 'handle': handle}


def arqs_with_handles(db, project_id=None, instance_uuid=None, uuids=None):
    """``[{uuid, instance_uuid, hostname, handle}]``, ``handle`` being the
    attach handle an ARQ holds in any state (None if none): what an
    unbind or delete must undo on the host."""
    query, params = _scope(_HELD_SELECT, project_id, instance_uuid, uuids)
    with db.read_connection() as conn:
        return [held_dict(row) for row in conn.execute(query, params)]


@dataclasses.dataclass
class Deletion:
    """What ``arq_delete`` found and did."""

    held: list       # held_dict() of every ARQ in scope
    deleted: bool    # False: host work must be undone first
    purge: bool      # a released handle's device has vanished


@engine.retry_on_conflict()
def arq_delete(db, check, project_id=None, instance_uuid=None, uuids=None,
               host_work_undone=False):
    """Delete the ARQs in scope and release their handles, in one
    transaction.

    ``check(held)`` sees every ARQ in scope first and may raise to delete
    nothing. ARQs holding a handle with work on the host (an mdev) are
    not deleted unless ``host_work_undone``: the caller undoes that work
    and calls again. Each ARQ is deleted only if its state and handle
    are still the ones read, so a bind that raced in between is never
    left holding a handle nobody will release, and a handle the ARQ lost
    meanwhile is never released: the transaction starts again instead.
    """
    query, params = _scope(_HELD_SELECT, project_id, instance_uuid, uuids)
    with db.write_connection() as conn:
        rows = conn.execute(query, params).all()
        if not rows and engine.after_lost_connection():
            # The commit of an earlier attempt deleted them (all or none,
            # one transaction), its answer lost; what it released may
            # have been a vanished device's.
            return Deletion([], deleted=True, purge=True)
        held = [held_dict(row) for row in rows]
        check(held)
        if not host_work_undone and any(
                row.attach_type == model.AttachType.MDEV.value
                for row in rows):
            return Deletion(held, deleted=False, purge=False)
        for row in rows:
            gone = conn.execute(_DELETE_IF_UNCHANGED, {
                'arq_id': row.id, 'seen_state': row.state,
                'seen_handle': row.attach_handle_id}).rowcount
            if gone != 1:
                raise engine.RetryTransaction()
        handle_ids = [row.attach_handle_id for row in rows
                      if row.attach_handle_id is not None]
        if handle_ids:
            conn.execute(RELEASE_HANDLES, {'handle_ids': handle_ids})
        return Deletion(held, deleted=True,
                        purge=any(row.vanished for row in rows))


def release_handles(conn, handle_ids) -> bool:
    """Free attach handles through a connection or session; True if one
    belongs to a vanished device."""
    if not handle_ids:
        return False
    conn.execute(RELEASE_HANDLES, {'handle_ids': list(handle_ids)})
    return conn.scalar(_VANISHED_AMONG,
                       {'handle_ids': list(handle_ids)}) is not None


def handle_dict(handle_id, row) -> dict:
    """An attach handle as the conductor and the agents pass it, from a
    row with ``handle_uuid``, ``attach_type`` and ``attach_info``."""
    return {'id': handle_id, 'uuid': row.handle_uuid,
            'attach_type': row.attach_type,
            'attach_info': json.loads(row.attach_info)}
