"""Consumers and their allocations.

Writing allocations replaces a consumer's allocations in one transaction:
check the consumer generation, delete, insert, check capacity, then bump
the generation of every provider involved (compare-and-swap).

The provider generations that a write bumps are ones it read itself, not
ones the client sent, so losing that compare-and-swap to a concurrent
writer only means "run again": the write is retried in a fresh
transaction (which sees the other writer's allocations when it checks
capacity), as Placement does, and the client sees 409
``placement.concurrent_update`` only if every attempt lost. So is a
write that MySQL picked as a deadlock's victim (InnoDB locks the gaps
that concurrent claims delete from and insert into): the server rolled
it back whole, and Placement retries it too.
"""

import functools
import logging
import random
import time

from oslo_db import exception as db_exc
import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import inventories
from placement_stub.db import models
from placement_stub.db import providers
from placement_stub.db import resource_classes
from placement_stub import exception

ALLOC = models.Allocation
C = models.Consumer
RP = models.ResourceProvider
RC = models.ResourceClass

LOG = logging.getLogger(__name__)
# Placement's [placement] allocation_conflict_retry_count default.
GENERATION_RACE_ATTEMPTS = 10
# Seconds: the longest pause after the first lost race, doubled after
# each further loss up to RACE_BACKOFF_MAX (see below).
RACE_BACKOFF = 0.005
RACE_BACKOFF_MAX = 0.1


class _ProviderGenerationRace(Exception):
    """A writer lost the compare-and-swap on a generation it read."""


def _retried_on_generation_race(fn):
    """Run the write transaction ``fn`` again when it loses a provider
    generation race or a deadlock; ConcurrentUpdate once every attempt
    lost."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        for attempt in range(1, GENERATION_RACE_ATTEMPTS + 1):
            try:
                return fn(ctx, *args, **kwargs)
            except (_ProviderGenerationRace, db_exc.DBDeadlock) as exc:
                LOG.debug('%s lost a race (%s; attempt %d of %d)',
                          fn.__name__, type(exc).__name__, attempt,
                          GENERATION_RACE_ATTEMPTS)
                # A short random pause, twice as long at most after each
                # loss, so that writers that lost together do not race
                # again in step (Placement retries at once; a dozen
                # claims at the same instant could then lose all ten
                # attempts, and on MySQL, whose writes hold their locks
                # longer, they did with pauses that grew by 5 ms).
                time.sleep(random.uniform(0, min(
                    RACE_BACKOFF * 2 ** attempt, RACE_BACKOFF_MAX)))
        raise exception.ConcurrentUpdate(what='resource provider')
    return wrapper


@api.reader
def get_consumer(ctx, uuid: str):
    row = ctx.session.execute(sa.select(
        C.id, C.uuid, C.project_id, C.user_id, C.consumer_type,
        C.generation).where(C.uuid == uuid)).mappings().first()
    return dict(row) if row else None


@api.reader
def consumer_allocations(ctx, uuid: str) -> dict:
    """``{rp_uuid: {"generation": g, "resources": {rc: used}}}``."""
    stmt = (sa.select(RP.uuid, RP.generation, RC.name, ALLOC.used)
            .join(RP, RP.id == ALLOC.resource_provider_id)
            .join(RC, RC.id == ALLOC.resource_class_id)
            .where(ALLOC.consumer_id == uuid))
    result = {}
    for rp_uuid, generation, name, used in ctx.session.execute(stmt):
        entry = result.setdefault(rp_uuid, {'generation': generation,
                                            'resources': {}})
        entry['resources'][name] = used
    return result


@api.reader
def provider_allocations(ctx, rp_id: int,
                         with_generation: bool = False) -> dict:
    """``{consumer_uuid: {"resources": {rc: used}}}``, with each
    consumer's ``consumer_generation`` when ``with_generation``."""
    stmt = (sa.select(ALLOC.consumer_id, RC.name, ALLOC.used, C.generation)
            .join(RC, RC.id == ALLOC.resource_class_id)
            .outerjoin(C, C.uuid == ALLOC.consumer_id)
            .where(ALLOC.resource_provider_id == rp_id))
    result = {}
    for consumer, name, used, generation in ctx.session.execute(stmt):
        entry = result.setdefault(consumer, {'resources': {}})
        entry['resources'][name] = used
        if with_generation:
            entry['consumer_generation'] = generation
    return result


def _touched_providers(ctx, consumer_uuid) -> dict:
    """``{rp_id: generation}`` of the providers the consumer uses now."""
    return dict(ctx.session.execute(
        sa.select(RP.id, RP.generation).distinct()
        .join(ALLOC, ALLOC.resource_provider_id == RP.id)
        .where(ALLOC.consumer_id == consumer_uuid)).all())


def _check_consumer_generation(consumer, sent):
    """409 unless the client sent the consumer's generation (null for a
    consumer that does not exist yet); the message says what the server
    expected and what it got, as Placement's."""
    current = consumer['generation'] if consumer else None
    if sent != current:
        raise exception.ConsumerGenerationConflict(
            expected='null' if current is None else current,
            got='null' if sent is None else sent)


def _upsert_consumer(ctx, consumer, req):
    if consumer is None:
        ctx.session.execute(sa.insert(C).values(
            uuid=req['consumer_uuid'], project_id=req['project_id'],
            user_id=req['user_id'], consumer_type=req.get('consumer_type'),
            generation=1, created_at=models._now()))
        return
    values = {'project_id': req['project_id'], 'user_id': req['user_id'],
              'generation': consumer['generation'] + 1,
              'updated_at': models._now()}
    if req.get('consumer_type') is not None:
        values['consumer_type'] = req['consumer_type']
    result = ctx.session.execute(sa.update(C).where(
        C.id == consumer['id'], C.generation == consumer['generation'])
        .values(**values))
    if result.rowcount != 1:
        raise exception.ConsumerGenerationConflict(
            expected=consumer['generation'], got='a newer one')


def _insert_allocations(ctx, req, rp_by_uuid, rc_ids):
    rows = []
    for rp_uuid, resources in req['allocations'].items():
        rp = rp_by_uuid.get(rp_uuid)
        if rp is None:
            raise exception.InvalidInput(
                detail="Allocation for resource provider '%s' that does "
                       "not exist." % rp_uuid)
        for name, used in resources.items():
            if name not in rc_ids:
                raise exception.NotFound(
                    what='No such resource class %s.' % name)
            rows.append({'resource_provider_id': rp['id'],
                         'consumer_id': req['consumer_uuid'],
                         'resource_class_id': rc_ids[name], 'used': used,
                         'created_at': models._now()})
    if rows:
        ctx.session.execute(sa.insert(ALLOC), rows)
    return {(row['resource_provider_id'], row['resource_class_id'])
            for row in rows}


def _check_capacity(ctx, pairs, rp_by_id, rc_names, requested,
                    usages_before):
    """Each (provider, class) written holds its allocations' constraints
    and stays within capacity, unless its usage is no higher than before
    the write (``usages_before``): a write that does not add to an
    overage (Nova moving an instance's allocations to its migration on
    a host whose inventory was lowered) goes through, as in Placement,
    which logs it as one that "reduces existing overage"."""
    rp_ids = {rp_id for rp_id, _ in pairs}
    invs = inventories.get_inventories(ctx, rp_ids)
    used = inventories.get_usages(ctx, rp_ids)
    for rp_id, rc_id in sorted(pairs):
        name, rp_uuid = rc_names[rc_id], rp_by_id[rp_id]['uuid']
        inv = invs[rp_id].get(name)
        if inv is None:
            raise exception.Conflict(
                detail="Unable to allocate inventory: Inventory for '%s' on "
                       "resource provider '%s' invalid." % (name, rp_uuid))
        for amount in requested.get((rp_uuid, name), ()):
            if not (inv['min_unit'] <= amount <= inv['max_unit']
                    and amount % inv['step_size'] == 0):
                raise exception.AllocationConstraintsViolated(
                    rc=name, uuid=rp_uuid)
        now = used[rp_id].get(name, 0)
        if now > inventories.capacity(inv):
            if now > usages_before.get(rp_id, {}).get(name, 0):
                raise exception.InsufficientCapacity(rc=name, uuid=rp_uuid)
            LOG.info('Allocations of %s on provider %s exceed its '
                     'capacity, but no more than before the write: '
                     'allowed', name, rp_uuid)


def _providers_by_uuid(ctx, requests):
    uuids = {u for req in requests for u in req['allocations']}
    if not uuids:
        return {}
    rows = ctx.session.execute(sa.select(RP.id, RP.uuid, RP.generation)
                               .where(RP.uuid.in_(list(uuids)))).mappings()
    return {row['uuid']: dict(row) for row in rows}


@_retried_on_generation_race
@api.writer
def replace_allocations(ctx, requests, check_generation=True) -> None:
    """Set the allocations of one or more consumers, all or nothing.

    Each request: ``{"consumer_uuid", "allocations": {rp_uuid: {rc: n}},
    "project_id", "user_id", "consumer_generation", "consumer_type"}``.
    """
    rp_by_uuid = _providers_by_uuid(ctx, requests)
    rc_ids = resource_classes.ids_by_name(
        ctx, {rc for req in requests for res in req['allocations'].values()
              for rc in res})
    # The generations to compare-and-swap are read before the capacity
    # check: a rival that commits after they were read makes the swap
    # fail, so the write runs again and counts the rival's allocations.
    generations = {rp['id']: rp['generation'] for rp in rp_by_uuid.values()}
    usages_before = inventories.get_usages(ctx, set(generations))
    pairs, requested = set(), {}
    for req in requests:
        consumer = get_consumer(ctx, req['consumer_uuid'])
        if check_generation:
            _check_consumer_generation(consumer, req['consumer_generation'])
        touched = _touched_providers(ctx, req['consumer_uuid'])
        ctx.session.execute(sa.delete(ALLOC).where(
            ALLOC.consumer_id == req['consumer_uuid']))
        if not any(req['allocations'].values()):
            # Clearing a consumer's allocations changes the providers it
            # had; a replacement changes only those it allocates from
            # now, as in Placement.
            for rp_id, generation in touched.items():
                generations.setdefault(rp_id, generation)
            if consumer is not None:
                _delete_consumer_if_unchanged(ctx, consumer)
            continue
        _upsert_consumer(ctx, consumer, req)
        pairs |= _insert_allocations(ctx, req, rp_by_uuid, rc_ids)
        for rp_uuid, res in req['allocations'].items():
            for name, amount in res.items():
                requested.setdefault((rp_uuid, name), []).append(amount)
    rp_by_id = {rp['id']: rp for rp in rp_by_uuid.values()}
    _check_capacity(ctx, pairs, rp_by_id,
                    {v: k for k, v in rc_ids.items()}, requested,
                    usages_before)
    _bump_all(ctx, generations)


def _bump_all(ctx, generations: dict) -> None:
    """Compare-and-swap each ``{rp_id: generation}`` read earlier in this
    transaction; re-reading a generation here would miss a rival's
    commit between the capacity check and the swap."""
    for rp_id, generation in sorted(generations.items()):
        try:
            providers.bump_generation(ctx, {'id': rp_id}, generation)
        except exception.ConcurrentUpdate as exc:
            raise _ProviderGenerationRace() from exc


@api.writer
def delete_allocations(ctx, consumer_uuid: str) -> None:
    """Delete a consumer and its allocations. The providers' generations
    stay, as in Placement: freeing capacity cannot overcommit anything."""
    if not _touched_providers(ctx, consumer_uuid):
        raise exception.NotFound(
            what="No allocations for consumer '%s'" % consumer_uuid)
    ctx.session.execute(sa.delete(ALLOC).where(
        ALLOC.consumer_id == consumer_uuid))
    _delete_consumer_without_allocations(ctx, consumer_uuid)


def _delete_consumer_if_unchanged(ctx, consumer) -> None:
    """Delete a consumer whose allocations were just cleared, if its
    generation is still the one read (a compare-and-swap, as an update
    of its allocations makes): ConsumerGenerationConflict if a
    concurrent write changed it."""
    if not ctx.session.execute(sa.delete(C).where(
            C.id == consumer['id'],
            C.generation == consumer['generation'])).rowcount:
        raise exception.ConsumerGenerationConflict(
            expected=consumer['generation'], got='a newer one')


def _delete_consumer_without_allocations(ctx, consumer_uuid) -> None:
    """Delete a consumer unless it has allocations: those a concurrent
    write gave it after this transaction deleted the ones it saw keep
    their consumer (and so count in their project's usages), as
    Placement deletes only consumers that have none."""
    ctx.session.execute(sa.delete(C).where(
        C.uuid == consumer_uuid,
        ~sa.exists().where(ALLOC.consumer_id == consumer_uuid)))
