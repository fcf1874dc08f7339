"""Handlers for /resource_providers/{uuid}/usages and /usages."""

from placement_stub.db import inventories
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import usage as schema


def list_usages(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    ctx = common.context(req)
    invs = inventories.get_inventories(ctx, [rp['id']])[rp['id']]
    used = inventories.get_usages(ctx, [rp['id']])[rp['id']]
    return common.json_response({
        'resource_provider_generation': rp['generation'],
        'usages': {name: used.get(name, 0) for name in invs}})


def get_total_usages(req):
    common.require(req, mv.allow_usages_by_project)
    common.context(req).can('placement:usages',
                            target={'project_id': req.GET.get('project_id')})
    version = common.version(req)
    by_type = mv.allow_consumer_types(version)
    common.validate_query(req, schema.GET_USAGES_SCHEMA_V1_38 if by_type
                          else schema.GET_USAGES_SCHEMA_V1_9)
    ctx = common.context(req)
    if not by_type:
        return common.json_response({'usages': inventories.project_usages(
            ctx, req.GET['project_id'], req.GET.get('user_id'))})
    return common.json_response({
        'usages': inventories.project_usages_by_type(
            ctx, req.GET['project_id'], req.GET.get('user_id'),
            req.GET.get('consumer_type'))})
