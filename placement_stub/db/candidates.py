"""Indexed SQL behind allocation candidates and provider filters.

Each query returns only providers that have capacity for one resource
class (and pass the group's trait, aggregate and tree filters), so the
Python side combines over matching trees only.
"""

import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub.db import resource_classes
from placement_stub.db import traits as traits_db
from placement_stub import exception

INV = models.Inventory
ALLOC = models.Allocation
RP = models.ResourceProvider
PT = models.ProviderTrait
PA = models.ProviderAggregate
AGG = models.Aggregate


def _usage_subquery(rc_id):
    return (sa.select(ALLOC.resource_provider_id,
                      sa.func.sum(ALLOC.used).label('used'))
            .where(ALLOC.resource_class_id == rc_id)
            .group_by(ALLOC.resource_provider_id).subquery())


def capacity_select(rc_id: int, amount: int):
    """(rp_id, root_id, free) of providers that can give ``amount``."""
    usage = _usage_subquery(rc_id)
    used = sa.func.coalesce(usage.c.used, 0)
    free = (INV.total - INV.reserved) * INV.allocation_ratio - used
    return (sa.select(INV.resource_provider_id.label('rp_id'),
                      RP.root_provider_id.label('root_id'),
                      free.label('free'))
            .join(RP, RP.id == INV.resource_provider_id)
            .outerjoin(usage, usage.c.resource_provider_id
                       == INV.resource_provider_id)
            .where(INV.resource_class_id == rc_id,
                   INV.min_unit <= amount, INV.max_unit >= amount,
                   sa.literal(amount) % INV.step_size == 0,
                   free >= amount)
            .order_by(RP.root_provider_id, INV.resource_provider_id))


def trait_ids_or_400(ctx, names) -> dict:
    ids = traits_db.ids_by_name(ctx, names)
    missing = sorted(set(names) - set(ids))
    if missing:
        raise exception.InvalidInput(
            detail='No such trait(s): %s.' % ', '.join(missing))
    return ids


def apply_trait_filters(ctx, stmt, rp_col, required, forbidden):
    """Restrict ``stmt`` to providers with all any-of sets, no forbidden."""
    ids = trait_ids_or_400(
        ctx, {n for names in required for n in names} | set(forbidden))
    for names in required:
        stmt = stmt.where(rp_col.in_(sa.select(PT.resource_provider_id)
                                     .where(PT.trait_id.in_(
                                         [ids[n] for n in names]))))
    if forbidden:
        stmt = stmt.where(rp_col.not_in(
            sa.select(PT.resource_provider_id)
            .where(PT.trait_id.in_([ids[n] for n in forbidden]))))
    return stmt


def apply_aggregate_filters(stmt, rp_col, member_of, forbidden_aggs):
    def in_aggs(uuids):
        return (sa.select(PA.resource_provider_id)
                .join(AGG, AGG.id == PA.aggregate_id)
                .where(AGG.uuid.in_(list(uuids))))
    for uuids in member_of:
        stmt = stmt.where(rp_col.in_(in_aggs(uuids)))
    if forbidden_aggs:
        stmt = stmt.where(rp_col.not_in(in_aggs(forbidden_aggs)))
    return stmt


def apply_in_tree(stmt, root_col, in_tree_uuid):
    root = sa.select(RP.root_provider_id).where(RP.uuid == in_tree_uuid)
    return stmt.where(root_col == root.scalar_subquery())


def rc_ids_or_400(ctx, names) -> dict:
    ids = resource_classes.ids_by_name(ctx, names)
    missing = sorted(set(names) - set(ids))
    if missing:
        raise exception.InvalidInput(
            detail='Invalid resource class in resources parameter: '
                   '%s' % ', '.join(missing))
    return ids


@api.reader
def providers_for_group(ctx, group, with_traits: bool) -> dict:
    """``{rc_name: [(rp_id, root_id, free)]}`` for one request group.

    ``with_traits`` applies the group's trait filters per provider (for
    suffixed groups); the unsuffixed group checks them over the union.
    """
    rc_ids = rc_ids_or_400(ctx, group.resources)
    result = {}
    for name, amount in group.resources.items():
        stmt = capacity_select(rc_ids[name], amount)
        rp_col = INV.resource_provider_id
        if with_traits:
            stmt = apply_trait_filters(ctx, stmt, rp_col, group.required,
                                       group.forbidden)
        stmt = apply_aggregate_filters(stmt, rp_col, group.member_of,
                                       group.forbidden_aggs)
        if group.in_tree:
            stmt = apply_in_tree(stmt, RP.root_provider_id, group.in_tree)
        result[name] = [tuple(row) for row in ctx.session.execute(stmt)]
    return result


@api.reader
def roots_with_traits(ctx, root_ids, required, forbidden) -> set:
    """Those of ``root_ids`` whose own traits pass ``root_required``."""
    stmt = sa.select(RP.id).where(RP.id.in_(list(root_ids)))
    stmt = apply_trait_filters(ctx, stmt, RP.id, required, forbidden)
    return set(ctx.session.execute(stmt).scalars())


@api.reader
def tree_parents(ctx, root_ids) -> dict:
    """``{rp_id: parent_id}`` for every provider of the given trees."""
    stmt = (sa.select(RP.id, RP.parent_provider_id)
            .where(RP.root_provider_id.in_(list(root_ids))))
    return dict(ctx.session.execute(stmt).all())
