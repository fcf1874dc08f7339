"""Traits, and the traits and aggregates of providers."""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub import exception
from placement_stub import standard

T = models.Trait
PT = models.ProviderTrait
PA = models.ProviderAggregate
AGG = models.Aggregate


@api.reader
def list_traits(ctx, names=None, prefix=None, associated=None) -> list:
    stmt = sa.select(T.name).order_by(T.name)
    if names is not None:
        stmt = stmt.where(T.name.in_(list(names)))
    if prefix is not None:
        stmt = stmt.where(T.name.startswith(prefix, autoescape=True))
    linked = sa.select(PT.trait_id)
    if associated is True:
        stmt = stmt.where(T.id.in_(linked))
    elif associated is False:
        stmt = stmt.where(T.id.not_in(linked))
    return list(ctx.session.execute(stmt).scalars())


@api.reader
def ids_by_name(ctx, names) -> dict:
    """``{name: id}`` for those of ``names`` that exist."""
    return api.ids_by_name(ctx, T, names)


def ensure_trait(ctx, name: str) -> bool:
    """Create ``name`` if missing; True when it was created (False too
    when a concurrent request created it first, as Placement answers
    204 then)."""
    try:
        return _create_trait_if_missing(ctx, name)
    except db_exc.DBDuplicateEntry:
        return False


@api.writer
def _create_trait_if_missing(ctx, name: str) -> bool:
    if ids_by_name(ctx, [name]):
        return False
    ctx.session.add(T(name=name))
    ctx.session.flush()
    return True


@api.writer
def delete_trait(ctx, name: str) -> None:
    if name in standard.TRAITS:
        raise exception.InvalidInput(
            detail='Cannot delete standard trait %s.' % name)
    trait_id = ids_by_name(ctx, [name]).get(name)
    if trait_id is None:
        raise exception.NotFound(what='No such trait(s): %s' % name)
    if ctx.session.execute(sa.select(PT.trait_id).where(
            PT.trait_id == trait_id)).first():
        raise exception.Conflict(
            detail='The trait %s is in use by a resource provider.' % name)
    ctx.session.execute(sa.delete(T).where(T.id == trait_id))


@api.reader
def provider_traits(ctx, rp_ids) -> dict:
    """``{rp_id: [trait names]}`` for the given providers."""
    result = {rp_id: [] for rp_id in rp_ids}
    if not result:
        return result
    pt, t = PT.__table__.c, T.__table__.c
    rows = ctx.session.connection().execute(
        sa.select(pt.resource_provider_id, t.name)
        .select_from(PT.__table__.join(T.__table__, t.id == pt.trait_id))
        .where(pt.resource_provider_id.in_(sorted(rp_ids)))
        .order_by(t.name))
    for rp_id, name in rows:
        result[rp_id].append(name)
    return result


@api.writer
def set_provider_traits(ctx, rp_id: int, names) -> None:
    ids = ids_by_name(ctx, names)
    missing = sorted(set(names) - set(ids))
    if missing:
        raise exception.InvalidInput(
            detail='No such trait(s): %s' % ', '.join(missing))
    ctx.session.execute(sa.delete(PT).where(PT.resource_provider_id == rp_id))
    if ids:
        ctx.session.execute(sa.insert(PT), [
            {'resource_provider_id': rp_id, 'trait_id': trait_id}
            for trait_id in ids.values()])


@api.reader
def provider_aggregates(ctx, rp_id: int) -> list:
    return list(ctx.session.execute(
        sa.select(AGG.uuid).join(PA, PA.aggregate_id == AGG.id)
        .where(PA.resource_provider_id == rp_id).order_by(AGG.id))
        .scalars())


@api.writer
def set_provider_aggregates(ctx, rp_id: int, uuids) -> None:
    ctx.session.execute(sa.delete(PA).where(PA.resource_provider_id == rp_id))
    # In the order given, so new aggregates get ids (the order they are
    # listed in) in that order, as in Placement.
    for agg_uuid in dict.fromkeys(uuids):
        agg_id = ctx.session.execute(
            sa.select(AGG.id).where(AGG.uuid == agg_uuid)).scalar()
        if agg_id is None:
            agg_id = ctx.session.execute(
                sa.insert(AGG).values(uuid=agg_uuid)).inserted_primary_key[0]
        ctx.session.execute(sa.insert(PA).values(
            resource_provider_id=rp_id, aggregate_id=agg_id))
