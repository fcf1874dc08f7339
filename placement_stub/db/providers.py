"""Resource providers: rows, trees, generations, traits and aggregates.

Every function takes the request context first and runs in its
transaction. Generations change by compare-and-swap.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub import exception
from placement_stub.schemas import common

RP = models.ResourceProvider


def _build_provider_select():
    table = RP.__table__
    parent = table.alias('parent')
    root = table.alias('root')
    return (sa.select(table.c.id, table.c.uuid, table.c.name,
                      table.c.generation, table.c.parent_provider_id,
                      table.c.root_provider_id,
                      parent.c.uuid.label('parent_provider_uuid'),
                      root.c.uuid.label('root_provider_uuid'),
                      table.c.updated_at)
            .outerjoin(parent, table.c.parent_provider_id == parent.c.id)
            .outerjoin(root, table.c.root_provider_id == root.c.id))


# Built once: composing aliased selects costs milliseconds per request.
_PROVIDER_SELECT = _build_provider_select()


def provider_select():
    """Providers with their parent's and root's uuid."""
    return _PROVIDER_SELECT


@api.reader
def get_provider(ctx, uuid: str) -> dict:
    row = ctx.session.execute(
        provider_select().where(RP.uuid == uuid)).mappings().first()
    if row is None:
        raise exception.ProviderNotFound(uuid=uuid)
    return dict(row)


@api.reader
def get_providers_by_ids(ctx, ids) -> list:
    if not ids:
        return []
    stmt = provider_select().where(RP.id.in_(list(ids))).order_by(RP.id)
    return [dict(r) for r in ctx.session.execute(stmt).mappings()]


@api.reader
def get_tree_providers(ctx, root_ids) -> list:
    """Every provider in the trees rooted at ``root_ids``, by id.

    Dicts with ``id``, ``uuid``, ``parent_provider_id``,
    ``root_provider_id``, ``parent_provider_uuid`` and
    ``root_provider_uuid``. A tree holds its parents and its root, so
    their uuids come from the same rows instead of two self-joins.
    """
    if not root_ids:
        return []
    t = RP.__table__.c
    rows = ctx.session.connection().execute(
        sa.select(t.id, t.uuid, t.parent_provider_id, t.root_provider_id)
        .where(t.root_provider_id.in_(sorted(root_ids)))
        .order_by(t.id)).all()
    uuid_of = dict((row[0], row[1]) for row in rows)
    if any(root not in uuid_of or (parent is not None
                                   and parent not in uuid_of)
           for _, _, parent, root in rows):
        stmt = (provider_select()
                .where(RP.root_provider_id.in_(list(root_ids)))
                .order_by(RP.id))
        return [dict(r) for r in ctx.session.execute(stmt).mappings()]
    return [{'id': rp_id, 'uuid': uuid, 'parent_provider_id': parent,
             'root_provider_id': root,
             'parent_provider_uuid': uuid_of.get(parent),
             'root_provider_uuid': uuid_of[root]}
            for rp_id, uuid, parent, root in rows]


def _check_unique(ctx, uuid, name, own_id=None):
    for column, value in ((RP.uuid, uuid), (RP.name, name)):
        found = ctx.session.execute(
            sa.select(RP.id).where(column == value)).scalar()
        if found is not None and found != own_id:
            if column is RP.name:
                raise exception.DuplicateName(name=name)
            raise exception.Conflict(
                detail='Conflicting resource provider uuid: %s already '
                       'exists.' % uuid)


@api.writer
def create_provider(ctx, uuid: str, name: str, parent_uuid=None) -> dict:
    _check_unique(ctx, uuid, name)
    parent = None
    if parent_uuid is not None:
        if parent_uuid == uuid:
            raise exception.ObjectActionError(
                action='create',
                reason='parent provider UUID cannot be same as UUID. Please '
                       'set parent provider UUID to None if there is no '
                       'parent.')
        parent = _parent_or_400(ctx, parent_uuid, 'create')
    rp = RP(uuid=uuid, name=name, generation=0,
            parent_provider_id=parent and parent['id'])
    ctx.session.add(rp)
    try:
        ctx.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateName(name=name)
    rp.root_provider_id = parent['root_provider_id'] if parent else rp.id
    ctx.session.flush()
    return get_provider(ctx, uuid)


def _parent_or_400(ctx, parent_uuid, action):
    try:
        return get_provider(ctx, parent_uuid)
    except exception.ProviderNotFound:
        raise exception.ObjectActionError(
            action=action, reason='parent provider UUID does not exist.')


def _subtree_ids(ctx, rp_id):
    ids, frontier = [rp_id], [rp_id]
    while frontier:
        frontier = list(ctx.session.execute(
            sa.select(RP.id).where(RP.parent_provider_id.in_(frontier)))
            .scalars())
        ids.extend(frontier)
    return ids


def _reparent(ctx, rp, parent_uuid, allow_reparenting):
    if parent_uuid == rp['parent_provider_uuid']:
        return
    if parent_uuid is not None:
        parent = _parent_or_400(ctx, parent_uuid, 'create')
    if rp['parent_provider_uuid'] is not None and not allow_reparenting:
        raise exception.ObjectActionError(
            action='update',
            reason='%s a provider is not currently allowed.' % (
                'un-parenting' if parent_uuid is None else 're-parenting'))
    subtree = _subtree_ids(ctx, rp['id'])
    if parent_uuid is None:
        parent_id, root_id = None, rp['id']
    else:
        if parent['id'] in subtree:
            raise exception.ObjectActionError(
                action='update',
                reason='creating loop in the provider tree is not allowed.')
        parent_id, root_id = parent['id'], parent['root_provider_id']
    ctx.session.execute(sa.update(RP).where(RP.id == rp['id'])
                        .values(parent_provider_id=parent_id))
    ctx.session.execute(sa.update(RP).where(RP.id.in_(subtree))
                        .values(root_provider_id=root_id))


@api.writer
def update_provider(ctx, uuid, name, parent_uuid=None, set_parent=False,
                    allow_reparenting=False) -> dict:
    """Rename and (from 1.14) re-parent a provider; its generation stays,
    as in Placement (it counts changes of inventory, traits and
    aggregates)."""
    rp = get_provider(ctx, uuid)
    _check_unique(ctx, uuid, name, own_id=rp['id'])
    if set_parent:
        _reparent(ctx, rp, parent_uuid, allow_reparenting)
    ctx.session.execute(sa.update(RP).where(RP.id == rp['id'])
                        .values(name=name, updated_at=models._now()))
    return get_provider(ctx, uuid)


@api.writer
def delete_provider(ctx, uuid: str) -> None:
    rp = get_provider(ctx, uuid)
    session = ctx.session
    if session.execute(sa.select(models.Allocation.id).where(
            models.Allocation.resource_provider_id == rp['id'])).first():
        raise exception.ProviderInUse(uuid=uuid)
    if session.execute(sa.select(RP.id).where(
            RP.parent_provider_id == rp['id'])).first():
        raise exception.CannotDeleteParent(uuid=uuid)
    for model in (models.Inventory, models.ProviderTrait,
                  models.ProviderAggregate):
        session.execute(sa.delete(model).where(
            model.resource_provider_id == rp['id']))
    session.execute(sa.update(RP).where(RP.id == rp['id'])
                    .values(root_provider_id=None))
    session.execute(sa.delete(RP).where(RP.id == rp['id']))


@api.writer
def bump_generation(ctx, rp: dict, expected=None) -> int:
    """Compare-and-swap the generation; ConcurrentUpdate when stale.

    A generation beyond what the column holds (a SQL INTEGER) is no
    provider's: stale without asking the database, which would refuse
    to compare it, as Placement compares it in Python and answers 409.
    """
    expected = rp['generation'] if expected is None else expected
    if not 0 <= expected <= common.MAX_INT:
        raise exception.ConcurrentUpdate(what='resource provider')
    result = ctx.session.execute(
        sa.update(RP).where(RP.id == rp['id'], RP.generation == expected)
        .values(generation=expected + 1, updated_at=models._now()))
    if result.rowcount != 1:
        raise exception.ConcurrentUpdate(what='resource provider')
    return expected + 1
