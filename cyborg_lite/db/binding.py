"""Binding and unbinding ARQs: the compare-and-swap heart of cyborg-lite.

An attach handle is taken with one conditional UPDATE::

    UPDATE attach_handles SET in_use = true WHERE id = :id AND in_use = false

and counts as ours only when the rowcount is 1. A lost race moves on to
the next free candidate, and when every candidate was lost the whole
transaction starts again. ARQ state changes are guarded the same way by
``state IN (<allowed sources>)`` from :data:`cyborg_lite.states.TRANSITIONS`.
This is correct on SQLite, PostgreSQL and MySQL alike, where
``SELECT ... FOR UPDATE`` is not.
"""

import dataclasses
import json
import types

from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg_lite import exception
from cyborg_lite import profiles
from cyborg_lite import states
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import models

_CANDIDATES = 8


@dataclasses.dataclass
class BindResult:
    """What :func:`bind` did, for the conductor's next step."""

    previous_state: str
    finished: bool
    bitstream_id: str | None
    deployable: dict
    handle: dict
    arq: dict


def _cas_state(session, uuid, target, values=None):
    """Move one ARQ to ``target`` if its state allows it; rowcount."""
    stmt = (sa.update(models.ExtArq)
            .where(models.ExtArq.uuid == uuid,
                   models.ExtArq.state.in_(states.allowed_sources(target)))
            .values(state=target, updated_at=timeutils.utcnow(),
                    **(values or {})))
    return session.execute(stmt).rowcount


def _current_state(session, uuid, project_id):
    query = sa.select(models.ExtArq.state).where(models.ExtArq.uuid == uuid)
    if project_id is not None:
        query = query.where(models.ExtArq.project_id == project_id)
    state = session.scalar(query)
    if state is None:
        raise exception.ARQNotFound(uuid=uuid)
    return state


def _take_free_handle(session, deployable_id):
    """Mark one free handle of a deployable in use; its row, or None if
    the deployable has no free handle at all."""
    handle = models.AttachHandle
    candidates = session.execute(
        sa.select(handle.id, handle.uuid, handle.attach_type,
                  handle.attach_info)
        .where(handle.deployable_id == deployable_id,
               handle.in_use.is_(False))
        .order_by(handle.id).limit(_CANDIDATES)).all()
    for candidate in candidates:
        taken = session.execute(
            sa.update(handle)
            .where(handle.id == candidate.id, handle.in_use.is_(False))
            .values(in_use=True)).rowcount
        if taken == 1:
            return candidate
    if candidates:
        # Every candidate went to a concurrent binder: look again.
        raise engine.RetryTransaction()
    return None


def _arq_for_bind(session, uuid, project_id, instance_uuid, batch):
    """The ARQ's row, its profile, and whether other ARQs than ``batch``
    are bound to ``instance_uuid``: one statement."""
    ext = models.ExtArq
    other = sa.select(sa.literal(1)).where(
        ext.instance_uuid == instance_uuid,
        ext.uuid.not_in(list(batch))).exists()
    query = (sa.select(ext.state, ext.device_profile_group_id,
                       ext.created_at, models.DeviceProfile.profile_json,
                       models.DeviceProfile.name, other.label('other'))
             .join(models.DeviceProfile,
                   ext.device_profile_id == models.DeviceProfile.id)
             .where(ext.uuid == uuid))
    if project_id is not None:
        query = query.where(ext.project_id == project_id)
    row = session.execute(query).first()
    if row is None:
        raise exception.ARQNotFound(uuid=uuid)
    if row.other:
        raise exception.InstanceAlreadyBound(instance=instance_uuid)
    groups = json.loads(row.profile_json)['groups']
    group = (groups[row.device_profile_group_id]
             if 0 <= row.device_profile_group_id < len(groups) else {})
    return row, group


@engine.retry_on_conflict(attempts=20)
def bind(db, uuid, fields, scope_project, batch=()):
    """Start a bind and allocate its attach handle, in one transaction.

    ``fields`` are hostname, device_rp_uuid, instance_uuid and
    project_id; ``batch`` the ARQs bound with this one, which may share
    its instance (any other ARQ of the instance is refused). When the
    bind needs no host work the ARQ ends Bound in the same transaction:
    Initial -> BindStarted -> Bound in one compare-and-swap, guarded by
    the sources of BindStarted, since nobody can see the state between.
    An MDEV handle (the agent creates the mdev) or a bitstream the
    deployable does not carry yet (the agent programs it) leave it
    BindStarted with its handle held, until :func:`finish_bind` or
    :func:`fail_bind`. Returns a :class:`BindResult`.
    """
    with db.writer() as session:
        row, group = _arq_for_bind(session, uuid, scope_project,
                                   fields['instance_uuid'],
                                   set(batch) | {uuid})
        dep = session.execute(
            sa.select(models.Deployable.id, models.Deployable.name,
                      models.Deployable.driver_name,
                      models.Deployable.bitstream_id)
            .where(models.Deployable.rp_uuid ==
                   fields['device_rp_uuid'])).first()
        if dep is None:
            raise exception.DeployableNotFound(ident=fields['device_rp_uuid'])
        handle = _take_free_handle(session, dep.id)
        if handle is None:
            raise exception.NoFreeAttachHandle(deployable=dep.name)
        bitstream = profiles.bitstream_id(group)
        finish = (handle.attach_type != 'MDEV' and
                  (bitstream is None or dep.bitstream_id == bitstream))
        target = states.BOUND if finish else states.BIND_STARTED
        now = timeutils.utcnow()
        values = dict(fields, attach_handle_id=handle.id,
                      deployable_id=dep.id)
        moved = session.execute(
            sa.update(models.ExtArq)
            .where(models.ExtArq.uuid == uuid,
                   models.ExtArq.state.in_(states.allowed_sources(
                       states.BIND_STARTED)))
            .values(state=target, updated_at=now, **values)).rowcount
        if not moved:
            raise exception.ARQBadState(
                uuid=uuid, state=row.state, action='bind',
                expected=sorted(states.allowed_sources(
                    states.BIND_STARTED)))
        arq = types.SimpleNamespace(
            uuid=uuid, state=target,
            device_profile_group_id=row.device_profile_group_id,
            created_at=row.created_at, updated_at=now, **fields)
        return BindResult(
            previous_state=row.state, finished=finish,
            bitstream_id=bitstream, deployable=dict(dep._mapping),
            handle=db_api.handle_dict(handle),
            arq=db_api.arq_to_dict(arq, row.name, handle))


@engine.retry_on_conflict()
def finish_bind(db, uuid) -> bool:
    """BindStarted -> Bound; False if the ARQ moved on meanwhile (for
    example the sweep failed it, or it was deleted)."""
    with db.writer() as session:
        return bool(_cas_state(session, uuid, states.BOUND))


@engine.retry_on_conflict()
def fail_bind(db, uuid, bind_fields=None) -> bool:
    """Mark an ARQ BindFailed and release any handle it held.

    ``bind_fields`` (hostname, device_rp_uuid, instance_uuid, project_id)
    are recorded when the bind failed before they were written, so that
    Nova can still find the failed ARQ by instance.
    """
    with db.writer() as session:
        handle_id = session.scalar(sa.select(models.ExtArq.attach_handle_id)
                                   .where(models.ExtArq.uuid == uuid))
        values = dict(bind_fields or {}, attach_handle_id=None)
        sources = states.allowed_sources(states.BIND_FAILED) | {
            states.INITIAL, states.UNBOUND}
        done = session.execute(
            sa.update(models.ExtArq)
            .where(models.ExtArq.uuid == uuid,
                   models.ExtArq.state.in_(sources))
            .values(state=states.BIND_FAILED,
                    updated_at=timeutils.utcnow(), **values)).rowcount
        if done and handle_id is not None:
            session.execute(sa.update(models.AttachHandle)
                            .where(models.AttachHandle.id == handle_id)
                            .values(in_use=False))
        return bool(done)


@engine.retry_on_conflict()
def unbind(db, uuid, scope_project) -> bool:
    """Clear an ARQ's binding and release its handle: state Unbound.

    Unbinding an Unbound ARQ changes nothing. Returns whether the handle
    belonged to a vanished device, which can now be purged.
    """
    with db.writer() as session:
        state = _current_state(session, uuid, scope_project)
        if state == states.UNBOUND:
            return False
        handle_id = session.scalar(sa.select(models.ExtArq.attach_handle_id)
                                   .where(models.ExtArq.uuid == uuid))
        cleared = {'hostname': None, 'device_rp_uuid': None,
                   'instance_uuid': None, 'attach_handle_id': None,
                   'deployable_id': None}
        if not _cas_state(session, uuid, states.UNBOUND, cleared):
            raise engine.RetryTransaction()
        return db_api.release_handles(
            session, [handle_id] if handle_id is not None else [])
