"""Handlers for /resource_providers and /resource_providers/{uuid}."""

import uuid as uuid_lib

import sqlalchemy as sa

from placement_stub.db import candidates as candidates_db
from placement_stub.db import providers
from placement_stub import errors
from placement_stub import exception
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub import request_groups
from placement_stub.schemas import common as schema_common
from placement_stub.schemas import resource_provider as schema

RP = providers.RP


def serialize(req, rp, version) -> dict:
    body = {'uuid': rp['uuid'], 'name': rp['name'],
            'generation': rp['generation'],
            'links': common.provider_links(req, rp, version)}
    if mv.allow_nested(version):
        body['parent_provider_uuid'] = rp['parent_provider_uuid']
        body['root_provider_uuid'] = rp['root_provider_uuid']
    return body


def create_resource_provider(req):
    version = common.version(req)
    data = common.extract_json(
        req, schema.POST_RESOURCE_PROVIDER_SCHEMA_V1_14
        if mv.allow_nested(version)
        else schema.POST_RESOURCE_PROVIDER_SCHEMA_V1_0)
    rp_uuid = str(uuid_lib.UUID(data.get('uuid') or str(uuid_lib.uuid4())))
    parent = data.get('parent_provider_uuid')
    try:
        rp = providers.create_provider(common.context(req), rp_uuid,
                                       data['name'], parent)
    except exception.ObjectActionError as exc:
        raise errors.bad_request(
            'Unable to create resource provider "%s", %s: %s' % (
                data['name'], rp_uuid, exc))
    location = {'Location': req.script_name + '/resource_providers/'
                + rp_uuid}
    if mv.allow_create_returns_body(version):
        return common.json_response(serialize(req, rp, version),
                                    headers=location)
    return common.no_content(201, headers=location)


def get_resource_provider(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response(serialize(req, rp, common.version(req)))


def update_resource_provider(req):
    version = common.version(req)
    data = common.extract_json(
        req, schema.PUT_RESOURCE_PROVIDER_SCHEMA_V1_14
        if mv.allow_nested(version)
        else schema.PUT_RESOURCE_PROVIDER_SCHEMA_V1_0)
    try:
        rp = providers.update_provider(
            common.context(req), req.urlvars['uuid'], data['name'],
            parent_uuid=data.get('parent_provider_uuid'),
            set_parent='parent_provider_uuid' in data,
            allow_reparenting=mv.allow_reparenting(version))
    except exception.ObjectActionError as exc:
        raise errors.bad_request('Unable to save resource provider %s: %s'
                                 % (req.urlvars['uuid'], exc))
    return common.json_response(serialize(req, rp, version))


def delete_resource_provider(req):
    uuid = req.urlvars['uuid']
    try:
        providers.delete_provider(common.context(req), uuid)
    except exception.ProviderNotFound:
        raise errors.not_found(
            'No resource provider with uuid %s found for delete' % uuid)
    return common.no_content()


def _allowed_filters(version):
    allowed = {'name', 'uuid'}
    for predicate, names in ((mv.allow_member_of, {'member_of'}),
                             (mv.allow_resources_filter, {'resources'}),
                             (mv.allow_nested, {'in_tree'}),
                             (mv.allow_provider_required, {'required'})):
        if predicate(version):
            allowed |= names
    return allowed


def _filtered_select(ctx, req, version):
    allowed = _allowed_filters(version)
    groups, others = request_groups.parse_groups(
        req.GET, version, allowed - set(request_groups.GROUP_PARAMS))
    unexpected = sorted(key for key in _group_keys(req.GET)
                        if key not in allowed)
    if unexpected:
        raise request_groups.QueryError(
            'Invalid query string parameters: Additional properties are '
            'not allowed (%s unexpected)' % ', '.join(
                "'%s' was" % key for key in unexpected))
    for key in ('uuid', 'in_tree'):
        if key in req.GET and not schema_common.is_uuid(req.GET[key]):
            raise request_groups.QueryError(
                "Invalid query string parameters: '%s' is not a 'uuid'"
                % req.GET[key])
    group = groups.get('', request_groups.RequestGroup())
    stmt = providers.provider_select().order_by(RP.id)
    if 'name' in others:
        stmt = stmt.where(RP.name == others['name'][0])
    if 'uuid' in others:
        stmt = stmt.where(RP.uuid == others['uuid'][0])
    stmt = candidates_db.apply_trait_filters(ctx, stmt, RP.id, group.required,
                                             group.forbidden)
    stmt = candidates_db.apply_aggregate_filters(
        stmt, RP.id, group.member_of, group.forbidden_aggs)
    if group.in_tree:
        stmt = candidates_db.apply_in_tree(stmt, RP.root_provider_id,
                                           group.in_tree)
    rc_ids = candidates_db.rc_ids_or_400(ctx, group.resources)
    for name, amount in group.resources.items():
        capable = candidates_db.capacity_select(rc_ids[name], amount)
        stmt = stmt.where(RP.id.in_(sa.select(capable.subquery().c.rp_id)))
    return stmt


def _group_keys(params):
    return {key for key in params.keys()
            if key.startswith(request_groups.GROUP_PARAMS)}


def list_resource_providers(req):
    ctx = common.context(req)
    version = common.version(req)
    stmt = _filtered_select(ctx, req, version)
    with ctx.facade.reader.using(ctx) as session:
        rows = [dict(r) for r in session.execute(stmt).mappings()]
    return common.json_response({'resource_providers': [
        serialize(req, rp, version) for rp in rows]})
