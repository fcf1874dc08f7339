"""Inventories and usages of resource providers."""

import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub.db import providers
from placement_stub.db import resource_classes
from placement_stub import exception
from placement_stub.schemas import common

INV = models.Inventory
ALLOC = models.Allocation
RC = models.ResourceClass

FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
          'allocation_ratio')
DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': common.MAX_INT,
            'step_size': 1, 'allocation_ratio': 1.0}


def capacity(inv: dict) -> int:
    """``(total - reserved) * allocation_ratio`` as an int."""
    return int((inv['total'] - inv['reserved']) * inv['allocation_ratio'])


@api.reader
def get_inventories(ctx, rp_ids) -> dict:
    """``{rp_id: {rc_name: {field: value}}}``."""
    result = {rp_id: {} for rp_id in rp_ids}
    if not result:
        return result
    stmt = (sa.select(INV.resource_provider_id, RC.name,
                      *[getattr(INV, f) for f in FIELDS])
            .join(RC, RC.id == INV.resource_class_id)
            .where(INV.resource_provider_id.in_(list(rp_ids))))
    for row in ctx.session.execute(stmt).mappings():
        result[row['resource_provider_id']][row['name']] = {
            f: row[f] for f in FIELDS}
    return result


@api.reader
def get_capacities(ctx, rp_ids) -> dict:
    """``{rp_id: [(rc_name, capacity)]}``, classes in id order.

    What provider summaries need, as plain tuples from Core.
    """
    result = {rp_id: [] for rp_id in rp_ids}
    if not result:
        return result
    inv, rc = INV.__table__.c, RC.__table__.c
    stmt = (sa.select(inv.resource_provider_id, rc.name, inv.total,
                      inv.reserved, inv.allocation_ratio)
            .select_from(INV.__table__.join(
                RC.__table__, rc.id == inv.resource_class_id))
            .where(inv.resource_provider_id.in_(sorted(rp_ids)))
            .order_by(inv.resource_provider_id, inv.resource_class_id))
    for rp_id, name, total, reserved, ratio in (
            ctx.session.connection().execute(stmt)):
        result[rp_id].append((name, int((total - reserved) * ratio)))
    return result


@api.reader
def get_usages(ctx, rp_ids) -> dict:
    """``{rp_id: {rc_name: used}}`` (only classes with allocations)."""
    result = {rp_id: {} for rp_id in rp_ids}
    if not result:
        return result
    alloc, rc = ALLOC.__table__.c, RC.__table__.c
    stmt = (sa.select(alloc.resource_provider_id, rc.name,
                      sa.func.sum(alloc.used))
            .select_from(ALLOC.__table__.join(
                RC.__table__, rc.id == alloc.resource_class_id))
            .where(alloc.resource_provider_id.in_(sorted(rp_ids)))
            .group_by(alloc.resource_provider_id, rc.name))
    for rp_id, name, used in ctx.session.connection().execute(stmt):
        result[rp_id][name] = int(used)
    return result


def _check_removable(ctx, rp, removed_names):
    """409 naming every class (in id order) whose inventory would go
    while it has allocations."""
    if not removed_names:
        return
    used = get_usages(ctx, [rp['id']])[rp['id']]
    in_use = [name for name in removed_names if used.get(name)]
    if in_use:
        ids = resource_classes.ids_by_name(ctx, in_use)
        raise exception.InventoryInUse(
            rc=', '.join(sorted(in_use, key=ids.get)), uuid=rp['uuid'])


@api.writer
def set_inventories(ctx, rp: dict, generation: int, inventories: dict,
                    partial=False) -> int:
    """Replace (or, ``partial``, upsert) inventories; the new generation.

    ``inventories`` maps class names to complete field dicts.
    """
    new_generation = providers.bump_generation(ctx, rp, generation)
    ids = resource_classes.ids_by_name(ctx, inventories)
    unknown = sorted(set(inventories) - set(ids))
    if unknown:
        raise exception.InvalidInput(
            detail='No such resource class %s.' % ', '.join(unknown))
    current = get_inventories(ctx, [rp['id']])[rp['id']]
    if not partial:
        removed = set(current) - set(inventories)
        _check_removable(ctx, rp, removed)
        if removed:
            gone = resource_classes.ids_by_name(ctx, removed).values()
            ctx.session.execute(sa.delete(INV).where(
                INV.resource_provider_id == rp['id'],
                INV.resource_class_id.in_(list(gone))))
    for name, fields in inventories.items():
        if name in current:
            ctx.session.execute(sa.update(INV).where(
                INV.resource_provider_id == rp['id'],
                INV.resource_class_id == ids[name]).values(**fields))
        else:
            ctx.session.execute(sa.insert(INV).values(
                resource_provider_id=rp['id'], resource_class_id=ids[name],
                **fields))
    return new_generation


@api.writer
def delete_inventory(ctx, rp: dict, name=None, generation=None) -> int:
    """Delete one class's inventory (or all with ``name`` None)."""
    current = get_inventories(ctx, [rp['id']])[rp['id']]
    if name is not None and name not in current:
        raise exception.NotFound(
            what='No inventory of class %s found for delete: no inventory '
                 'of %s on resource provider %s.' % (name, name, rp['uuid']))
    removed = set(current) if name is None else {name}
    _check_removable(ctx, rp, removed)
    new_generation = providers.bump_generation(ctx, rp, generation)
    gone = resource_classes.ids_by_name(ctx, removed).values()
    ctx.session.execute(sa.delete(INV).where(
        INV.resource_provider_id == rp['id'],
        INV.resource_class_id.in_(list(gone))))
    return new_generation


def _project_allocations(project_id, user_id, columns):
    """A select of ``columns`` over the allocations of a project's
    (and user's) consumers."""
    C = models.Consumer
    stmt = (sa.select(*columns).select_from(ALLOC)
            .join(C, C.uuid == ALLOC.consumer_id)
            .where(C.project_id == project_id))
    if user_id is not None:
        stmt = stmt.where(C.user_id == user_id)
    return stmt


@api.reader
def project_usages(ctx, project_id, user_id=None) -> dict:
    """``{rc: used}`` summed over the consumers of a project (and user)."""
    stmt = _project_allocations(project_id, user_id, (
        RC.name, sa.func.sum(ALLOC.used))).join(
            RC, RC.id == ALLOC.resource_class_id).group_by(RC.name)
    return {name: int(used) for name, used in ctx.session.execute(stmt)}


@api.reader
def project_usages_by_type(ctx, project_id, user_id=None,
                           consumer_type=None) -> dict:
    """``{type: {rc: used, 'consumer_count': n}}`` (1.38): by consumer
    type, untyped consumers under ``unknown``; ``consumer_type`` keeps one
    type, ``unknown`` the untyped, and ``all`` sums every consumer under
    ``all``. ``consumer_count`` counts distinct consumers."""
    C = models.Consumer
    type_key = sa.func.coalesce(C.consumer_type, 'unknown')
    if consumer_type == 'all':
        type_key = sa.literal('all')
    columns = (type_key.label('type_key'), RC.name,
               sa.func.sum(ALLOC.used))
    usages = _project_allocations(project_id, user_id, columns).join(
        RC, RC.id == ALLOC.resource_class_id)
    counts = _project_allocations(project_id, user_id, (
        type_key.label('type_key'),
        sa.func.count(sa.distinct(ALLOC.consumer_id))))
    if consumer_type not in (None, 'all'):
        usages = usages.where(type_key == consumer_type)
        counts = counts.where(type_key == consumer_type)
    result = {}
    for key, name, used in ctx.session.execute(
            usages.group_by(type_key, RC.name)):
        result.setdefault(key, {})[name] = int(used)
    for key, count in ctx.session.execute(counts.group_by(type_key)):
        if key in result:
            result[key]['consumer_count'] = count
    return result
