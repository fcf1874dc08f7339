"""Indexed SQL behind allocation candidates and provider filters.

Each query returns only providers that have capacity for one resource
class (and pass the group's trait, aggregate and tree filters), so the
Python side combines over matching trees only.

Allocation candidates read the fleet in slices of consecutive root ids
(``GroupQueries``): every query of a slice is driven by the index on
``resource_providers.root_provider_id``, so a request with a ``limit``
reads about as many trees as it returns, whatever the size of the fleet.
"""

import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub.db import resource_classes
from placement_stub.db import traits as traits_db
from placement_stub.schemas import common
from placement_stub import exception

INV = models.Inventory
ALLOC = models.Allocation
RP = models.ResourceProvider
PT = models.ProviderTrait
PA = models.ProviderAggregate
AGG = models.Aggregate

# Core tables: the candidate queries return plain tuples, without the
# ORM's row processing.
INV_T = INV.__table__
ALLOC_T = ALLOC.__table__
RP_T = RP.__table__
PT_T = PT.__table__
PA_T = PA.__table__
AGG_T = AGG.__table__
RC_T = models.ResourceClass.__table__
T_T = models.Trait.__table__
# Bounds of a slice of root ids: (lo, hi]. Provider ids are 32-bit
# integers, and the bounds must be too: psycopg 3 sends them as INTEGER
# parameters, which PostgreSQL refuses out of that range.
NO_LOWER_BOUND = -common.MAX_INT - 1
NO_UPPER_BOUND = common.MAX_INT


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


def _slice_capacity_select(rc_id, amount):
    """(rp_id, root_id, free) for one class, for roots in (lo, hi].

    ``free`` is the most one allocation may take: the free capacity, or
    the max_unit if that is less (groups that take the same class from
    one provider must stay within both together, as in Placement).

    Driven by the root index: ``resource_class_id + 0`` keeps SQLite from
    scanning every inventory of the class instead, and the usage is a
    correlated sum over the (provider, class, used) index.
    """
    inv, rp = INV_T.c, RP_T.c
    used = (sa.select(sa.func.sum(ALLOC_T.c.used))
            .where(ALLOC_T.c.resource_provider_id == inv.resource_provider_id,
                   ALLOC_T.c.resource_class_id == rc_id)
            .scalar_subquery())
    free = ((inv.total - inv.reserved) * inv.allocation_ratio
            - sa.func.coalesce(used, 0))
    most = sa.case((free < inv.max_unit, free), else_=inv.max_unit)
    return (sa.select(inv.resource_provider_id, rp.root_provider_id, most)
            .select_from(INV_T.join(RP_T,
                                    rp.id == inv.resource_provider_id))
            .where(inv.resource_class_id + 0 == rc_id,
                   inv.min_unit <= amount, inv.max_unit >= amount,
                   sa.literal(amount) % inv.step_size == 0,
                   free >= amount,
                   rp.root_provider_id > sa.bindparam('lo'),
                   rp.root_provider_id <= sa.bindparam('hi'))
            .order_by(rp.root_provider_id, inv.resource_provider_id))


def _slice_provider_select():
    """(rp_id, root_id, 0) of every provider, for roots in (lo, hi]: what
    a resourceless request group (1.36) may pick from."""
    rp = RP_T.c
    return (sa.select(rp.id, rp.root_provider_id, sa.literal(0))
            .where(rp.root_provider_id > sa.bindparam('lo'),
                   rp.root_provider_id <= sa.bindparam('hi'))
            .order_by(rp.root_provider_id, rp.id))


def _has_trait(rp_col, trait_ids):
    return (sa.select(PT_T.c.resource_provider_id)
            .where(PT_T.c.resource_provider_id == rp_col,
                   PT_T.c.trait_id.in_(trait_ids)).exists())


def _in_aggregates(rp_col, uuids):
    return (sa.select(PA_T.c.resource_provider_id)
            .select_from(PA_T.join(AGG_T,
                                   AGG_T.c.id == PA_T.c.aggregate_id))
            .where(PA_T.c.resource_provider_id == rp_col,
                   AGG_T.c.uuid.in_(sorted(uuids))).exists())


class GroupQueries:
    """The per-class queries of every request group.

    Names are resolved (and unknown ones rejected, with the same 400s as
    before) in the constructor; ``rows`` runs the queries for one
    slice of root ids. Built statements are kept by what they filter on
    (ids, amounts, aggregate uuids), since composing them costs more than
    running them for a slice.
    """

    _cache = {}
    CACHE_SIZE = 512

    def __init__(self, ctx, groups):
        self._stmts = []
        for group in groups:
            rc_ids = rc_ids_or_400(ctx, group.resources)
            trait_ids = (trait_ids_or_400(ctx, group.required_names
                                          | set(group.forbidden))
                         if group.suffix else {})
            required = tuple(tuple(sorted(trait_ids[n] for n in names))
                             for names in group.required) \
                if group.suffix else ()
            forbidden = tuple(sorted(trait_ids[n] for n in group.forbidden)) \
                if group.suffix else ()
            filters = (required, forbidden,
                       tuple(tuple(sorted(u)) for u in group.member_of),
                       tuple(sorted(group.forbidden_aggs)), group.in_tree,
                       not group.suffix)
            for name, amount in group.resources.items():
                self._stmts.append((group.suffix, name, self._statement(
                    rc_ids[name], amount, filters)))
            if not group.resources:
                # A resourceless group: any provider that passes its
                # filters, under the class name None.
                self._stmts.append((group.suffix, None, self._filtered(
                    _slice_provider_select(), *filters,
                    rp_col=RP_T.c.id)))

    @classmethod
    def _statement(cls, rc_id, amount, filters):
        key = (rc_id, amount, filters)
        stmt = cls._cache.get(key)
        if stmt is None:
            stmt = cls._filtered(_slice_capacity_select(rc_id, amount),
                                 *filters)
            if len(cls._cache) >= cls.CACHE_SIZE:
                cls._cache.clear()
            cls._cache[key] = stmt
        return stmt

    @staticmethod
    def _filtered(stmt, required, forbidden, member_of, forbidden_aggs,
                  in_tree, tree_wide, rp_col=INV_T.c.resource_provider_id):
        """``stmt`` with a group's filters. ``tree_wide`` (the unsuffixed
        group): an aggregate of a tree's root counts for every provider
        of the tree, as in Placement."""
        def in_aggregates(uuids):
            member = _in_aggregates(rp_col, uuids)
            if tree_wide:
                member = member | _in_aggregates(RP_T.c.root_provider_id,
                                                 uuids)
            return member

        for ids in required:
            stmt = stmt.where(_has_trait(rp_col, list(ids)))
        if forbidden:
            stmt = stmt.where(~_has_trait(rp_col, list(forbidden)))
        for uuids in member_of:
            stmt = stmt.where(in_aggregates(uuids))
        if forbidden_aggs:
            stmt = stmt.where(~in_aggregates(forbidden_aggs))
        if in_tree:
            stmt = apply_in_tree(stmt, RP_T.c.root_provider_id, in_tree)
        return stmt

    def sharing_rows(self, ctx, sharing_ids) -> dict:
        """``{suffix: {rc: [(rp_id, root_id, free)]}}`` of the sharing
        providers ``sharing_ids``, whatever their roots. A resourceless
        group may pick a sharing provider too (under the class None), as
        Placement lets it: one that passes the group's filters."""
        conn = ctx.session.connection()
        params = {'lo': NO_LOWER_BOUND, 'hi': NO_UPPER_BOUND,
                  'sharing': sorted(sharing_ids)}
        result = {}
        for suffix, name, stmt in self._stmts:
            provider = (RP_T.c.id if name is None
                        else INV_T.c.resource_provider_id)
            result.setdefault(suffix, {})[name] = conn.execute(
                stmt.where(provider.in_(
                    sa.bindparam('sharing', expanding=True))),
                params).all()
        return result

    def rows(self, ctx, lo=NO_LOWER_BOUND, hi=NO_UPPER_BOUND) -> dict:
        """``{suffix: {rc: [(rp_id, root_id, free)]}}`` for roots in
        (lo, hi]."""
        conn = ctx.session.connection()
        params = {'lo': lo, 'hi': hi}
        result = {}
        for suffix, name, stmt in self._stmts:
            result.setdefault(suffix, {})[name] = conn.execute(
                stmt, params).all()
        return result


SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


@api.reader
def sharing_anchors(ctx) -> dict:
    """``{rp_id: roots}`` of every sharing provider (one with the trait
    MISC_SHARES_VIA_AGGREGATE): the roots of the trees it shares its
    resources with, those that have a provider in one of its aggregates,
    its own root aside. Empty (one query) where nothing shares."""
    conn = ctx.session.connection()
    pt, t = PT_T.c, T_T.c
    sharing = list(conn.execute(
        sa.select(pt.resource_provider_id)
        .select_from(PT_T.join(T_T, t.id == pt.trait_id))
        .where(t.name == SHARING_TRAIT)).scalars())
    if not sharing:
        return {}
    own_root = dict(conn.execute(
        sa.select(RP_T.c.id, RP_T.c.root_provider_id)
        .where(RP_T.c.id.in_(sharing))).all())
    mine, peer = PA_T.alias('mine'), PA_T.alias('peer')
    rows = conn.execute(
        sa.select(mine.c.resource_provider_id, RP_T.c.root_provider_id)
        .distinct()
        .select_from(mine.join(peer, peer.c.aggregate_id
                               == mine.c.aggregate_id)
                     .join(RP_T, RP_T.c.id == peer.c.resource_provider_id))
        .where(mine.c.resource_provider_id.in_(sharing))).all()
    anchors = {rp_id: set() for rp_id in sharing}
    for rp_id, root_id in rows:
        if root_id != own_root.get(rp_id):
            anchors[rp_id].add(root_id)
    return anchors


@api.reader
def next_roots(ctx, after, count) -> list:
    """Up to ``count`` root provider ids above ``after``, ascending."""
    rp = RP_T.c
    stmt = (sa.select(rp.id)
            .where(rp.parent_provider_id.is_(None), rp.id > after)
            .order_by(rp.id).limit(count))
    return list(ctx.session.connection().execute(stmt).scalars())


@api.reader
def tree_details(ctx, root_ids, with_traits: bool) -> tuple:
    """Capacities, usages and traits of every provider in the trees.

    ``({rp_id: [(rc, capacity)]}, {rp_id: {rc: used}},
    {rp_id: [trait names]})``; selected by root id (a few hundred
    parameters at most) rather than by provider id.
    """
    roots = sorted(root_ids)
    conn = ctx.session.connection()
    rp, inv, rc = RP_T.c, INV_T.c, RC_T.c
    in_trees = rp.root_provider_id.in_(roots)
    capacities = {}
    stmt = (sa.select(inv.resource_provider_id, rc.name, inv.total,
                      inv.reserved, inv.allocation_ratio)
            .select_from(INV_T.join(RP_T, rp.id == inv.resource_provider_id)
                         .join(RC_T, rc.id == inv.resource_class_id))
            .where(in_trees)
            .order_by(inv.resource_provider_id, inv.resource_class_id))
    for rp_id, name, total, reserved, ratio in conn.execute(stmt).all():
        capacities.setdefault(rp_id, []).append(
            (name, int((total - reserved) * ratio)))
    usages = {}
    alloc = ALLOC_T.c
    stmt = (sa.select(alloc.resource_provider_id, rc.name,
                      sa.func.sum(alloc.used))
            .select_from(ALLOC_T.join(RP_T,
                                      rp.id == alloc.resource_provider_id)
                         .join(RC_T, rc.id == alloc.resource_class_id))
            .where(in_trees)
            .group_by(alloc.resource_provider_id, rc.name))
    for rp_id, name, used in conn.execute(stmt).all():
        usages.setdefault(rp_id, {})[name] = int(used)
    trait_names = {}
    if with_traits:
        pt, t = PT_T.c, T_T.c
        stmt = (sa.select(pt.resource_provider_id, t.name)
                .select_from(PT_T.join(RP_T, rp.id == pt.resource_provider_id)
                             .join(T_T, t.id == pt.trait_id))
                .where(in_trees).order_by(t.id))
        for rp_id, name in conn.execute(stmt).all():
            trait_names.setdefault(rp_id, []).append(name)
    return capacities, usages, trait_names
