"""Handlers for /resource_providers/{uuid}/aggregates."""

import random
import time

from oslo_db import exception as db_exc

from placement_stub.db import providers
from placement_stub.db import traits
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import aggregate as schema

# Attempts of a write that a concurrent one got in the way of (below).
WRITE_ATTEMPTS = 5


def _body(req, ctx, rp_id, generation):
    body = {'aggregates': traits.provider_aggregates(ctx, rp_id)}
    if mv.allow_aggregates_generation(common.version(req)):
        body['resource_provider_generation'] = generation
    return body


def get_aggregates(req):
    common.require(req, mv.allow_aggregates)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response(
        _body(req, common.context(req), rp['id'], rp['generation']))


def set_aggregates(req):
    common.require(req, mv.allow_aggregates)
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    with_generation = mv.allow_aggregates_generation(common.version(req))
    if with_generation:
        data = common.extract_json(req, schema.PUT_AGGREGATES_SCHEMA_V1_19)
        uuids, expected = (data['aggregates'],
                           data['resource_provider_generation'])
    else:
        uuids = common.extract_json(req, schema.PUT_AGGREGATES_SCHEMA_V1_1)
        expected = rp['generation']
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            with ctx.facade.writer.using(ctx):
                generation = providers.bump_generation(ctx, rp, expected)
                traits.set_provider_aggregates(ctx, rp['id'], uuids)
            break
        except (db_exc.DBDuplicateEntry, db_exc.DBDeadlock):
            # A concurrent request created one of the new aggregates
            # first, or MySQL rolled this write back as a deadlock's
            # victim (providers that join one new aggregate at once all
            # insert it): again, in a fresh transaction, after a short
            # random pause so that the writers do not meet again in step.
            if attempt == WRITE_ATTEMPTS:
                raise
            time.sleep(random.uniform(0, 0.005 * attempt))
    return common.json_response(_body(req, ctx, rp['id'], generation))
