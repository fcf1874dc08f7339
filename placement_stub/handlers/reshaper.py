"""Handler for POST /reshaper (1.30)."""

import uuid as uuid_lib

from placement_stub.db import providers
from placement_stub.db import reshaper
from placement_stub import errors
from placement_stub import exception
from placement_stub.handlers import allocation
from placement_stub.handlers import common
from placement_stub.handlers import inventory
from placement_stub import microversion as mv
from placement_stub.schemas import reshaper as schema


def _schema(version):
    if mv.allow_consumer_types(version):
        return schema.POST_RESHAPER_SCHEMA_V1_38
    if mv.allow_mappings(version):
        return schema.POST_RESHAPER_SCHEMA_V1_34
    return schema.POST_RESHAPER_SCHEMA


def _provider_at_generation(ctx, rp_uuid, generation) -> dict:
    """The provider; 400 if there is none, 409 if the client's generation
    is not its own."""
    try:
        rp = providers.get_provider(ctx, rp_uuid)
    except exception.ProviderNotFound as exc:
        raise errors.bad_request(
            'Resource provider %s in inventories not found: %s'
            % (rp_uuid, exc), errors.RESOURCE_PROVIDER_NOT_FOUND)
    if generation != rp['generation']:
        raise errors.conflict(
            'resource provider generation conflict for provider %s: '
            'actual: %s, given: %s' % (rp_uuid, rp['generation'],
                                       generation), errors.CONCURRENT_UPDATE)
    return rp


def reshape(req):
    """Move inventory and allocations in one transaction: 204, or a 4xx
    and nothing changed."""
    common.require(req, mv.allow_reshaper)
    ctx = common.context(req)
    data = common.extract_json(req, _schema(common.version(req)))
    new_inventories = []
    for rp_uuid, inv_data in data['inventories'].items():
        rp = _provider_at_generation(
            ctx, rp_uuid, inv_data['resource_provider_generation'])
        new_inventories.append((rp, inventory.validated(
            req, rp, inv_data['inventories'])))
    requests = [allocation.allocation_request(
        req, str(uuid_lib.UUID(consumer)), body)
        for consumer, body in sorted(data['allocations'].items())]
    try:
        reshaper.reshape(ctx, new_inventories, requests)
    except (exception.NotFound, exception.InvalidInput) as exc:
        raise errors.bad_request('malformed reshaper data: %s' % exc)
    except exception.InventoryInUse as exc:
        raise errors.conflict('update conflict: %s' % exc,
                              errors.INVENTORY_INUSE)
    except exception.ConcurrentUpdate as exc:
        raise errors.conflict('update conflict: %s' % exc,
                              errors.CONCURRENT_UPDATE)
    return common.no_content()
