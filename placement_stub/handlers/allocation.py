"""Handlers for /allocations[/{consumer_uuid}] and provider allocations."""

from oslo_utils import uuidutils

from placement_stub.db import allocations
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import allocation as schema


def _put_schema(version):
    for predicate, put_schema in (
            (mv.allow_consumer_types, schema.PUT_ALLOCATION_SCHEMA_V1_38),
            (mv.allow_consumer_generation,
             schema.PUT_ALLOCATION_SCHEMA_V1_28),
            (mv.allow_dict_allocations, schema.PUT_ALLOCATION_SCHEMA_V1_12),
            (mv.require_project_user, schema.PUT_ALLOCATION_SCHEMA_V1_8)):
        if predicate(version):
            return put_schema
    return schema.PUT_ALLOCATION_SCHEMA_V1_0


def _identity(value, header):
    """The caller's project or user, for a consumer whose body names
    none (before 1.8): at most as long as the consumer's columns."""
    if value and len(value) > schema.PROJECT_USER['maxLength']:
        raise errors.bad_request('%s is longer than %d characters, the '
                                 'most a consumer keeps.' % (
                                     header, schema.PROJECT_USER['maxLength']))
    return value or 'unknown'


def _normalise(req, consumer_uuid, data) -> dict:
    """Any body version -> the DB layer's request dict."""
    allocs = data['allocations']
    if isinstance(allocs, list):
        by_rp = {}
        for entry in allocs:
            by_rp.setdefault(entry['resource_provider']['uuid'], {}).update(
                entry['resources'])
    else:
        by_rp = {rp: entry['resources'] for rp, entry in allocs.items()}
    ctx = common.context(req)
    return {'consumer_uuid': consumer_uuid, 'allocations': by_rp,
            'project_id': data.get('project_id') or _identity(
                ctx.project_id, 'X-Project-Id'),
            'user_id': data.get('user_id') or _identity(ctx.user_id,
                                                        'X-User-Id'),
            'consumer_generation': data.get('consumer_generation'),
            'consumer_type': data.get('consumer_type')}


def set_allocations_for_consumer(req):
    version = common.version(req)
    consumer_uuid = req.urlvars['consumer_uuid']
    if not uuidutils.is_uuid_like(consumer_uuid):
        raise errors.bad_request('Malformed consumer_uuid: %s'
                                 % consumer_uuid[:64])
    data = common.extract_json(req, _put_schema(version))
    request = _normalise(req, consumer_uuid, data)
    allocations.replace_allocations(
        common.context(req), [request],
        check_generation=mv.allow_consumer_generation(version))
    return common.no_content()


def set_allocations(req):
    common.require(req, mv.allow_post_allocations)
    version = common.version(req)
    post_schema = (schema.POST_ALLOCATIONS_V1_38
                   if mv.allow_consumer_types(version) else
                   schema.POST_ALLOCATIONS_V1_28
                   if mv.allow_consumer_generation(version) else
                   schema.POST_ALLOCATIONS_V1_13)
    data = common.extract_json(req, post_schema)
    requests = [_normalise(req, consumer, body)
                for consumer, body in sorted(data.items())]
    allocations.replace_allocations(
        common.context(req), requests,
        check_generation=mv.allow_consumer_generation(version))
    return common.no_content()


def list_for_consumer(req):
    version = common.version(req)
    ctx = common.context(req)
    uuid = req.urlvars['consumer_uuid']
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
                                   req.urlvars['consumer_uuid'])
    return common.no_content()


def list_for_resource_provider(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response({
        'resource_provider_generation': rp['generation'],
        'allocations': allocations.provider_allocations(
            common.context(req), rp['id'])})

