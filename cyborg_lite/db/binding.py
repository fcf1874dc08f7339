"""Binding and unbinding ARQs: the compare-and-swap heart of cyborg-lite.

An attach handle is taken with one conditional UPDATE::

    UPDATE attach_handles SET in_use = true WHERE id = :id AND in_use = false

and counts as ours only when the rowcount is 1. A lost race moves on to
the next free candidate, and when every candidate was lost the whole
transaction starts again. ARQ state changes are guarded the same way:
a bind by ``state IN (<allowed sources>)`` from
``cyborg_lite.states.TRANSITIONS``; a finish, a failure and an
unbind by the state and the handle the ARQ had when read, so that a
writer acting on an ARQ that has moved on since (unbound, bound again
with another handle) changes nothing and never releases a handle that
another ARQ holds. This is correct on SQLite, PostgreSQL and MySQL
alike, where ``SELECT ... FOR UPDATE`` is not.
"""

import dataclasses
import datetime
import json
import types

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg_lite import exception
from cyborg_lite import profiles
from cyborg_lite import states
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine

_CANDIDATES = 8


@dataclasses.dataclass
class BindResult:
    """What ``bind`` did, for the conductor's next step.

    ``repeated``: nothing, because the ARQ was already Bound (finished)
    or BindStarted as asked; ``deployable`` and ``handle`` are None.
    """

    previous_state: str
    finished: bool
    bitstream_id: str | None
    deployable: dict | None
    handle: dict | None
    arq: dict
    repeated: bool = False


ARQS = db_api.ARQS
HANDLES = db_api.HANDLES
DEPLOYABLES = db_api.DEPLOYABLES


# The deployable and up to _CANDIDATES of its free handles: one row with
# NULL handle columns when it has none free (or its device has vanished
# from its host's reports: nothing is bound to a card that is gone), no
# row when it is unknown.
# Any free handles will do, so there is no ORDER BY: the database stops
# at the first few that the (deployable_id, in_use, id) index yields, in
# id order in practice, instead of reading and sorting every free handle
# of the deployable (a planner cannot take an order from the inner side
# of the outer join).
_DEPLOYABLE_AND_FREE_HANDLES = (
    sa.select(DEPLOYABLES.c.id.label('deployable_id'),
              DEPLOYABLES.c.name.label('deployable_name'),
              DEPLOYABLES.c.driver_name, DEPLOYABLES.c.bitstream_id,
              HANDLES.c.id.label('handle_id'),
              HANDLES.c.uuid.label('handle_uuid'), HANDLES.c.attach_type,
              HANDLES.c.attach_info)
    .select_from(DEPLOYABLES.join(
        db_api.DEVICES, db_api.DEVICES.c.id == DEPLOYABLES.c.device_id)
        .outerjoin(HANDLES, sa.and_(
            HANDLES.c.deployable_id == DEPLOYABLES.c.id,
            HANDLES.c.in_use.is_(False),
            db_api.DEVICES.c.vanished.is_(False))))
    .where(DEPLOYABLES.c.rp_uuid == sa.bindparam('rp_uuid'))
    .limit(_CANDIDATES)
    .subquery('candidates'))

# In one round trip: the ARQ (with the binding it has), its profile,
# whether ARQs other than the batch being bound are bound to the
# instance, and the candidates above, one row per candidate. No row: the
# ARQ is unknown; NULL deployable columns: the deployable is.
_ARQ_AND_CANDIDATES = (
    sa.select(ARQS.c.state, ARQS.c.device_profile_group_id,
              ARQS.c.created_at, db_api.PROFILES.c.profile_json,
              ARQS.c.hostname.label('bound_hostname'),
              ARQS.c.device_rp_uuid.label('bound_rp_uuid'),
              ARQS.c.instance_uuid.label('bound_instance_uuid'),
              db_api.PROFILES.c.name,
              sa.select(sa.literal(1)).where(
                  ARQS.c.instance_uuid == sa.bindparam('instance_uuid'),
                  ARQS.c.uuid.not_in(sa.bindparam('batch', expanding=True)))
              .exists().label('other'),
              sa.select(sa.literal(1)).where(
                  ARQS.c.instance_uuid == sa.bindparam('instance_uuid'),
                  ARQS.c.uuid != sa.bindparam('uuid'))
              .exists().label('sibling'),
              _DEPLOYABLE_AND_FREE_HANDLES)
    # The candidates are joined before the profile: SQLAlchemy's MySQL
    # compiler links a join's two sides only, so joined the other way
    # round, its FROM linter would warn of a cartesian product.
    .select_from(ARQS.outerjoin(_DEPLOYABLE_AND_FREE_HANDLES, sa.true())
                 .join(db_api.PROFILES,
                       ARQS.c.device_profile_id == db_api.PROFILES.c.id))
    .where(ARQS.c.uuid == sa.bindparam('uuid'))
    .order_by(_DEPLOYABLE_AND_FREE_HANDLES.c.handle_id))

_ARQ_AND_CANDIDATES_IN_PROJECT = _ARQ_AND_CANDIDATES.where(
    ARQS.c.project_id == sa.bindparam('project_id'))

_TAKE_HANDLE = (sa.update(HANDLES)
                .where(HANDLES.c.id == sa.bindparam('handle_id'),
                       HANDLES.c.in_use.is_(False))
                .values(in_use=True))

_BIND_FIELDS = ('hostname', 'device_rp_uuid', 'instance_uuid', 'project_id',
                'attach_handle_id', 'deployable_id', 'state', 'updated_at',
                'instance_claim')

_START_BIND = (
    sa.update(ARQS)
    .where(ARQS.c.uuid == sa.bindparam('arq_uuid'),
           ARQS.c.state.in_(states.allowed_sources(states.BIND_STARTED)))
    .values({name: sa.bindparam('new_' + name) for name in _BIND_FIELDS}))


def _take_free_handle(conn, rows):
    """Mark one of the free handles in ``rows`` in use; its row, or None
    if the deployable has no free handle at all."""
    candidates = [row for row in rows if row.handle_id is not None]
    for candidate in candidates:
        if conn.execute(_TAKE_HANDLE,
                        {'handle_id': candidate.handle_id}).rowcount == 1:
            return candidate
    if candidates:
        # Every candidate went to a concurrent binder: look again.
        raise engine.RetryTransaction()
    return None


_BIND_SOURCES = states.allowed_sources(states.BIND_STARTED)


def _bound_as_asked(row, fields) -> bool:
    """Whether the ARQ of ``row`` is Bound, or being bound, to the host,
    device and instance of ``fields``."""
    return (row.state in (states.BOUND, states.BIND_STARTED) and
            (row.bound_hostname, row.bound_rp_uuid,
             row.bound_instance_uuid) ==
            (fields['hostname'], fields['device_rp_uuid'],
             fields['instance_uuid']))


def _arq_and_candidates(conn, uuid, project_id, fields, batch,
                        repeat=False):
    """The ARQ's rows (one per free handle candidate) and its profile
    group, or None for a ``repeat`` that finds the ARQ bound as asked
    (see ``bind``); raises if the ARQ is unknown or in a state that
    cannot be bound, if another ARQ than ``batch`` is bound to the
    instance, or if the deployable is unknown."""
    params = {'uuid': uuid, 'instance_uuid': fields['instance_uuid'],
              'batch': list(batch), 'rp_uuid': fields['device_rp_uuid']}
    query = _ARQ_AND_CANDIDATES
    if project_id is not None:
        query = _ARQ_AND_CANDIDATES_IN_PROJECT
        params['project_id'] = project_id
    rows = conn.execute(query, params).all()
    if not rows:
        raise exception.ARQNotFound(uuid=uuid)
    row = rows[0]
    if row.state not in _BIND_SOURCES:
        # Before anything else: a request that cannot bind this ARQ must
        # not fail it (and free the handle of its binding) either.
        if repeat and _bound_as_asked(row, fields):
            return rows, None
        raise exception.ARQBadState(uuid=uuid, state=row.state,
                                    action='bind',
                                    expected=sorted(_BIND_SOURCES))
    if row.other:
        raise exception.InstanceAlreadyBound(instance=fields['instance_uuid'])
    if row.deployable_id is None:
        raise exception.DeployableNotFound(ident=fields['device_rp_uuid'])
    groups = json.loads(row.profile_json)['groups']
    group = (groups[row.device_profile_group_id]
             if 0 <= row.device_profile_group_id < len(groups) else {})
    return rows, group


@engine.retry_on_conflict(attempts=20)
def bind(db, uuid, fields, scope_project, batch=(), repeat=False):
    """Start a bind and allocate its attach handle, in one transaction.

    ``fields`` are hostname, device_rp_uuid, instance_uuid and
    project_id; ``batch`` the ARQs bound with this one, which may share
    its instance (any other ARQ of the instance is refused). When the
    bind needs no host work the ARQ ends Bound in the same transaction:
    Initial -> BindStarted -> Bound in one compare-and-swap, guarded by
    the sources of BindStarted, since nobody can see the state between.
    An MDEV handle (the agent creates the mdev) or a bitstream the
    deployable does not carry yet (the agent programs it) leave it
    BindStarted with its handle held, until ``finish_bind`` or
    ``fail_bind``. Returns a ``BindResult``.

    ``repeat``: this call repeats one that may have been done (its
    answer was lost with its conductor). An ARQ that is Bound, or
    BindStarted, to the same host, device and instance is then left as
    it is, and the result says ``repeated``. Otherwise, binding an ARQ
    that is not Initial or Unbound raises ARQBadState. A bind that loses
    the ARQ to a concurrent one looks again, so that a repeat racing the
    call it repeats sees that call's binding.
    """
    with db.write_connection() as conn:
        rows, group = _arq_and_candidates(conn, uuid, scope_project, fields,
                                          set(batch) | {uuid}, repeat)
        row = rows[0]
        if group is not None:
            handle = _take_free_handle(conn, rows)
            if handle is None:
                raise exception.NoFreeAttachHandle(
                    deployable=row.deployable_name)
            bitstream = profiles.bitstream_id(group)
            finish = (handle.attach_type != 'MDEV' and
                      (bitstream is None or row.bitstream_id == bitstream))
            target = states.BOUND if finish else states.BIND_STARTED
            now = timeutils.utcnow()
            # The first ARQ bound to the instance claims it: a rival bind
            # of other ARQs to it, that saw no ARQ of the instance either,
            # fails the claim's unique index and runs again, and finds
            # this one.
            claim = None if row.sibling else fields['instance_uuid']
            values = dict(fields, attach_handle_id=handle.handle_id,
                          deployable_id=row.deployable_id, state=target,
                          updated_at=now, instance_claim=claim)
            try:
                moved = conn.execute(_START_BIND, dict(
                    {'new_' + name: values[name] for name in _BIND_FIELDS},
                    arq_uuid=uuid)).rowcount
            except db_exc.DBDuplicateEntry:
                raise engine.RetryTransaction() from None
            if not moved:
                # The ARQ changed since it was read: read it again.
                raise engine.RetryTransaction()
    if group is None:
        return BindResult(
            previous_state=row.state, finished=row.state == states.BOUND,
            bitstream_id=None, deployable=None, handle=None,
            arq=db_api.arq_get(db, uuid, project_id=scope_project),
            repeated=True)
    arq = types.SimpleNamespace(
        uuid=uuid, state=target,
        device_profile_group_id=row.device_profile_group_id,
        created_at=row.created_at, updated_at=now,
        device_profile_name=row.name, handle_uuid=handle.handle_uuid,
        attach_type=handle.attach_type, attach_info=handle.attach_info,
        **fields)
    return BindResult(
        previous_state=row.state, finished=finish, bitstream_id=bitstream,
        deployable={'id': row.deployable_id, 'name': row.deployable_name,
                    'driver_name': row.driver_name,
                    'bitstream_id': row.bitstream_id},
        handle=db_api.handle_dict(handle.handle_id, handle),
        arq=db_api.arq_to_dict(arq))


_BIND_IN_PROGRESS = (
    sa.select(ARQS.c.attach_handle_id, HANDLES.c.uuid.label('handle_uuid'),
              HANDLES.c.attach_type, HANDLES.c.attach_info,
              ARQS.c.device_profile_group_id,
              db_api.PROFILES.c.profile_json)
    .select_from(ARQS.join(HANDLES, ARQS.c.attach_handle_id == HANDLES.c.id)
                 .join(db_api.PROFILES,
                       ARQS.c.device_profile_id == db_api.PROFILES.c.id))
    .where(ARQS.c.uuid == sa.bindparam('uuid'),
           ARQS.c.state == states.BIND_STARTED))


def bind_in_progress(db, uuid):
    """``(handle, bitstream_id)`` of an ARQ in BindStarted: what its bind
    has left to do on the host (create the handle's mdev, or program
    the bitstream, None when the profile names none); None when the ARQ
    is not BindStarted."""
    with db.read_connection() as conn:
        row = conn.execute(_BIND_IN_PROGRESS, {'uuid': uuid}).first()
    if row is None:
        return None
    groups = json.loads(row.profile_json)['groups']
    group = (groups[row.device_profile_group_id]
             if 0 <= row.device_profile_group_id < len(groups) else {})
    return (db_api.handle_dict(row.attach_handle_id, row),
            profiles.bitstream_id(group))


def _holds(handle_id):
    """The clause: the ARQ holds ``handle_id`` (None: no handle)."""
    return ARQS.c.attach_handle_id.is_not_distinct_from(handle_id)


_BOUND_HOLDING = (sa.select(sa.literal(1))
                  .where(ARQS.c.uuid == sa.bindparam('uuid'),
                         ARQS.c.state == states.BOUND,
                         ARQS.c.attach_handle_id == sa.bindparam('handle')))


@engine.retry_on_conflict()
def finish_bind(db, uuid, handle_id) -> bool:
    """BindStarted -> Bound, for the bind that took ``handle_id``: True
    once the ARQ is Bound holding it, whoever finished it (a conductor
    that took over a repeated bind, or this call's own attempt whose
    commit's answer was lost); False if the ARQ moved on meanwhile (its
    host work failed elsewhere, it was unbound, deleted or bound again
    with another handle), and the host work is to be undone."""
    with db.write_connection() as conn:
        if conn.execute(
                sa.update(ARQS)
                .where(ARQS.c.uuid == uuid,
                       ARQS.c.state == states.BIND_STARTED,
                       _holds(handle_id))
                .values(state=states.BOUND,
                        updated_at=timeutils.utcnow())).rowcount:
            return True
        return handle_id is not None and conn.execute(
            _BOUND_HOLDING, {'uuid': uuid, 'handle': handle_id}
        ).first() is not None


def keep_bind_fresh(db, uuid, handle_id) -> bool:
    """Mark a bind in BindStarted as still being worked on (its
    ``updated_at``), so that the sweep leaves it to the conductor that
    is finishing it; False if the ARQ moved on."""
    with db.write_connection() as conn:
        return bool(conn.execute(
            sa.update(ARQS)
            .where(ARQS.c.uuid == uuid,
                   ARQS.c.state == states.BIND_STARTED, _holds(handle_id))
            .values(updated_at=timeutils.utcnow())).rowcount)


# What a bind that its conductor left reads as last worked on: older
# than any sweep's cutoff.
LEFT_AT = datetime.datetime(1970, 1, 1)


def leave_bind(db, uuid, handle_id) -> bool:
    """Leave a bind in BindStarted that holds ``handle_id`` to the next
    sweep, by a conductor that stops before its host work is done: it
    reads as worked on long ago, so the first sweep to run claims it at
    once (``claim_stuck_bind``) instead of after bind_timeout. False
    if the ARQ moved on."""
    with db.write_connection() as conn:
        return bool(conn.execute(
            sa.update(ARQS)
            .where(ARQS.c.uuid == uuid,
                   ARQS.c.state == states.BIND_STARTED, _holds(handle_id))
            .values(updated_at=LEFT_AT)).rowcount)


def claim_stuck_bind(db, uuid, older_than):
    """Claim a bind left in BindStarted since before ``older_than`` (its
    conductor was lost, or stopped) for the caller to finish: its
    ``(handle, bitstream_id)``, as ``bind_in_progress`` gives them,
    with the bind marked as worked on; None when it is no longer stuck
    (finished, failed, unbound, or claimed by another conductor's sweep
    since it was read). The write is guarded by the state, the handle
    and the age read, so of two sweeps that read one stuck bind, one
    claims it."""
    work = bind_in_progress(db, uuid)
    if work is None:
        return None
    handle_id = work[0]['id'] if work[0] else None
    with db.write_connection() as conn:
        claimed = conn.execute(
            sa.update(ARQS)
            .where(ARQS.c.uuid == uuid, ARQS.c.state == states.BIND_STARTED,
                   _holds(handle_id), ARQS.c.updated_at < older_than)
            .values(updated_at=timeutils.utcnow())).rowcount
    return work if claimed else None


# The states fail_bind() may be asked to leave, and which of its callers
# ask: a bind that found no handle or no deployable (Initial, Unbound:
# the ARQ holds nothing), a bind whose host work failed (BindStarted).
FAILABLE = frozenset({states.INITIAL, states.UNBOUND, states.BIND_STARTED})

_ANY_HANDLE = object()


@engine.retry_on_conflict()
def fail_bind(db, uuid, sources, handle_id=_ANY_HANDLE,
              bind_fields=None) -> bool:
    """Mark an ARQ BindFailed and release the handle it holds; False, and
    nothing changed, unless the ARQ is in one of ``sources`` (a subset
    of ``FAILABLE``) and holds ``handle_id`` when one is given
    (None: no handle).

    The caller says what it knows of the ARQ, so that a failure acting
    on an earlier state changes nothing: a programming thread that
    outlived an unbind, or one racing a conductor that took its bind
    over and finished it, never fails an ARQ bound since nor releases a
    handle that another ARQ has taken meanwhile. The state and handle
    read are the compare-and-swap's guard: a change between the read
    and the write starts the transaction again.

    ``bind_fields`` (hostname, device_rp_uuid, instance_uuid, project_id)
    are recorded when the bind failed before they were written, so that
    Nova can still find the failed ARQ by instance.
    """
    if not sources <= FAILABLE:
        raise ValueError('fail_bind cannot leave %s'
                         % ', '.join(sorted(sources - FAILABLE)))
    query = sa.select(ARQS.c.state, ARQS.c.attach_handle_id).where(
        ARQS.c.uuid == uuid, ARQS.c.state.in_(sources))
    with db.write_connection() as conn:
        row = conn.execute(query).first()
        if row is None and engine.after_lost_connection():
            # The commit of an earlier attempt may have failed it.
            return conn.execute(sa.select(ARQS.c.state).where(
                ARQS.c.uuid == uuid)).scalar() == states.BIND_FAILED
        if row is None or (handle_id is not _ANY_HANDLE and
                           row.attach_handle_id != handle_id):
            return False
        guard = [ARQS.c.uuid == uuid, ARQS.c.state == row.state,
                 _holds(row.attach_handle_id)]
        # The deployable goes with the handle: a failed ARQ holds
        # nothing that would keep a report from removing the device.
        values = dict(bind_fields or {}, attach_handle_id=None,
                      deployable_id=None, instance_claim=None)
        if not conn.execute(
                sa.update(ARQS).where(*guard)
                .values(state=states.BIND_FAILED,
                        updated_at=timeutils.utcnow(), **values)).rowcount:
            raise engine.RetryTransaction()
        if row.attach_handle_id is not None:
            conn.execute(db_api.RELEASE_HANDLES,
                         {'handle_ids': [row.attach_handle_id]})
        return True


_UNBIND_SOURCES = states.allowed_sources(states.UNBOUND)


@engine.retry_on_conflict()
def unbind(db, uuid, scope_project) -> bool:
    """Clear an ARQ's binding and release its handle: state Unbound.

    Unbinding an Unbound ARQ changes nothing. The state and handle read
    guard the write, so the handle released is the one the ARQ held when
    it was unbound, never one it lost and another ARQ took meanwhile.
    Returns whether the handle belonged to a vanished device, which can
    now be purged.
    """
    query = sa.select(ARQS.c.state, ARQS.c.attach_handle_id).where(
        ARQS.c.uuid == uuid)
    if scope_project is not None:
        query = query.where(ARQS.c.project_id == scope_project)
    with db.write_connection() as conn:
        row = conn.execute(query).first()
        if row is None:
            raise exception.ARQNotFound(uuid=uuid)
        if row.state == states.UNBOUND:
            return False
        if row.state not in _UNBIND_SOURCES:
            raise exception.ARQBadState(uuid=uuid, state=row.state,
                                        action='unbind',
                                        expected=sorted(_UNBIND_SOURCES))
        cleared = {'hostname': None, 'device_rp_uuid': None,
                   'instance_uuid': None, 'attach_handle_id': None,
                   'deployable_id': None, 'instance_claim': None}
        if not conn.execute(
                sa.update(ARQS)
                .where(ARQS.c.uuid == uuid, ARQS.c.state == row.state,
                       _holds(row.attach_handle_id))
                .values(state=states.UNBOUND, updated_at=timeutils.utcnow(),
                        **cleared)).rowcount:
            raise engine.RetryTransaction()
        return db_api.release_handles(
            conn, [row.attach_handle_id]
            if row.attach_handle_id is not None else [])
