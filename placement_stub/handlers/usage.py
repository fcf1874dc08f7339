"""Handlers for /resource_providers/{uuid}/usages and /usages."""

from placement_stub.db import inventories
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv


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
    allowed = {'project_id', 'user_id'}
    if mv.allow_consumer_types(version):
        allowed.add('consumer_type')
    unknown = set(req.GET) - allowed
    if unknown or 'project_id' not in req.GET:
        raise errors.bad_request(
            'Invalid query string parameters: project_id is required and '
            'only %s are allowed.' % ', '.join(sorted(allowed)))
    by_type = mv.allow_consumer_types(version)
    usages = inventories.project_usages(
        common.context(req), req.GET['project_id'], req.GET.get('user_id'),
        by_type=by_type)
    if not by_type:
        return common.json_response({'usages': usages.get(None, {})})
    wanted = req.GET.get('consumer_type', 'all')
    if wanted != 'all':
        usages = {k: v for k, v in usages.items() if k == wanted}
    return common.json_response({'usages': usages})
