"""Handlers for /allocations[/{consumer_uuid}] and provider allocations."""

import uuid as uuid_lib

from oslo_utils import uuidutils

from placement_stub.db import allocations
from placement_stub import errors
from placement_stub import exception
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import allocation as schema


def _put_schema(version):
    for predicate, put_schema in (
            (mv.allow_consumer_types, schema.PUT_ALLOCATION_SCHEMA_V1_38),
            (mv.allow_mappings, schema.PUT_ALLOCATION_SCHEMA_V1_34),
            (mv.allow_consumer_generation,
             schema.PUT_ALLOCATION_SCHEMA_V1_28),
            (mv.allow_dict_allocations, schema.PUT_ALLOCATION_SCHEMA_V1_12),
            (mv.require_project_user, schema.PUT_ALLOCATION_SCHEMA_V1_8)):
        if predicate(version):
            return put_schema
    return schema.PUT_ALLOCATION_SCHEMA_V1_0


def _post_schema(version):
    for predicate, post_schema in (
            (mv.allow_consumer_types, schema.POST_ALLOCATIONS_V1_38),
            (mv.allow_mappings, schema.POST_ALLOCATIONS_V1_34),
            (mv.allow_consumer_generation, schema.POST_ALLOCATIONS_V1_28)):
        if predicate(version):
            return post_schema
    return schema.POST_ALLOCATIONS_V1_13


def consumer_uuid_or_400(req) -> str:
    """The consumer uuid of the path in its dashed form (a dashless one
    names the same consumer, as in Placement); 400 if it is none."""
    consumer_uuid = req.urlvars['consumer_uuid']
    if not uuidutils.is_uuid_like(consumer_uuid):
        raise errors.bad_request('Malformed consumer_uuid: %s'
                                 % consumer_uuid[:64])
    return str(uuid_lib.UUID(consumer_uuid))


def allocation_request(req, consumer_uuid, data) -> dict:
    """One consumer's body, of any version -> the DB layer's request
    dict."""
    allocs = data['allocations']
    if isinstance(allocs, list):
        by_rp = {}
        for entry in allocs:
            by_rp.setdefault(entry['resource_provider']['uuid'], {}).update(
                entry['resources'])
    else:
        by_rp = {rp: entry['resources'] for rp, entry in allocs.items()}
    # Before 1.8 a body may name no project or user: the consumer is
    # Placement's "incomplete consumer", of the configured placeholders.
    placeholders = common.context(req).config.placement
    return {'consumer_uuid': consumer_uuid, 'allocations': by_rp,
            'project_id': data.get('project_id')
            or placeholders.incomplete_consumer_project_id,
            'user_id': data.get('user_id')
            or placeholders.incomplete_consumer_user_id,
            'consumer_generation': data.get('consumer_generation'),
            'consumer_type': data.get('consumer_type')}


def set_allocations_for_consumer(req):
    version = common.version(req)
    consumer_uuid = consumer_uuid_or_400(req)
    data = common.extract_json(req, _put_schema(version))
    request = allocation_request(req, consumer_uuid, data)
    try:
        allocations.replace_allocations(
            common.context(req), [request],
            check_generation=mv.allow_consumer_generation(version))
    except exception.NotFound as exc:
        raise errors.bad_request(
            'Unable to allocate inventory for consumer %s: %s'
            % (consumer_uuid, exc))
    return common.no_content()


def set_allocations(req):
    common.require(req, mv.allow_post_allocations)
    version = common.version(req)
    data = common.extract_json(req, _post_schema(version))
    requests = [allocation_request(req, str(uuid_lib.UUID(consumer)), body)
                for consumer, body in sorted(data.items())]
    try:
        allocations.replace_allocations(
            common.context(req), requests,
            check_generation=mv.allow_consumer_generation(version))
    except exception.NotFound as exc:
        raise errors.bad_request('Unable to allocate inventory %s' % exc)
    return common.no_content()


def list_for_consumer(req):
    version = common.version(req)
    ctx = common.context(req)
    uuid = consumer_uuid_or_400(req)
    allocs = allocations.consumer_allocations(ctx, uuid)
    body = {'allocations': allocs}
    consumer = allocations.get_consumer(ctx, uuid)
    if mv.allow_dict_allocations(version) and consumer:
        body['project_id'] = consumer['project_id']
        body['user_id'] = consumer['user_id']
    if mv.allow_consumer_generation(version) and consumer:
        body['consumer_generation'] = consumer['generation']
    if mv.allow_consumer_types(version) and consumer:
        body['consumer_type'] = consumer['consumer_type'] or 'unknown'
    return common.json_response(body)


def delete_allocations(req):
    allocations.delete_allocations(common.context(req),
                                   consumer_uuid_or_400(req))
    return common.no_content()


def list_for_resource_provider(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    # From 1.28 each consumer says its generation, as in Placement.
    return common.json_response({
        'resource_provider_generation': rp['generation'],
        'allocations': allocations.provider_allocations(
            common.context(req), rp['id'],
            with_generation=mv.allow_consumer_generation(
                common.version(req)))})

