"""Handlers for /traits[/{name}] and /resource_providers/{uuid}/traits."""

from placement_stub.db import providers
from placement_stub.db import traits
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import trait as schema
from placement_stub import standard


def _parse_name_filter(value):
    if value.startswith('in:'):
        return [n.strip() for n in value[3:].split(',')], None
    if value.startswith('startswith:'):
        return None, value[len('startswith:'):]
    raise errors.bad_request(
        'Badly formatted name parameter. Expected name query string '
        'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
        'Got: "%s"' % value)


def list_traits(req):
    common.require(req, mv.allow_traits)
    common.validate_query(req, schema.LIST_TRAIT_SCHEMA)
    names, prefix = None, None
    if 'name' in req.GET:
        names, prefix = _parse_name_filter(req.GET['name'])
    associated = req.GET.get('associated')
    if associated is not None:
        if associated.lower() not in ('true', 'false'):
            raise errors.bad_request(
                'The query parameter "associated" only accepts "true" or '
                '"false"')
        associated = associated.lower() == 'true'
    result = traits.list_traits(common.context(req), names, prefix,
                                associated)
    return common.json_response({'traits': result})


def get_trait(req):
    common.require(req, mv.allow_traits)
    name = req.urlvars['name']
    if not traits.ids_by_name(common.context(req), [name]):
        raise errors.not_found('No such trait(s): %s' % name)
    return common.cacheable(req, common.no_content())


def put_trait(req):
    common.require(req, mv.allow_traits)
    name = req.urlvars['name']
    if not standard.CUSTOM_RE.match(name):
        raise errors.bad_request(
            "The trait is invalid. A valid trait must be no longer than 255 "
            "characters, start with the prefix \"CUSTOM_\" and use following "
            "characters: \"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
    created = traits.ensure_trait(common.context(req), name)
    return common.cacheable(req, common.no_content(
        201 if created else 204,
        headers={'Location': req.script_name + '/traits/' + name}))


def delete_trait(req):
    common.require(req, mv.allow_traits)
    traits.delete_trait(common.context(req), req.urlvars['name'])
    return common.no_content()


def _traits_body(ctx, rp_id, generation):
    return {'traits': traits.provider_traits(ctx, [rp_id])[rp_id],
            'resource_provider_generation': generation}


def list_provider_traits(req):
    common.require(req, mv.allow_traits)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response(
        _traits_body(common.context(req), rp['id'], rp['generation']))


def update_provider_traits(req):
    common.require(req, mv.allow_traits)
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    data = common.extract_json(req, schema.SET_TRAITS_FOR_RP_SCHEMA)
    if data['resource_provider_generation'] != rp['generation']:
        raise errors.conflict(
            "Resource provider's generation already changed. Please update "
            "the generation and try again.", errors.CONCURRENT_UPDATE)
    with ctx.facade.writer.using(ctx):
        generation = providers.bump_generation(
            ctx, rp, data['resource_provider_generation'])
        traits.set_provider_traits(ctx, rp['id'], data['traits'])
    return common.json_response(_traits_body(ctx, rp['id'], generation))


def delete_provider_traits(req):
    common.require(req, mv.allow_traits)
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    with ctx.facade.writer.using(ctx):
        providers.bump_generation(ctx, rp)
        traits.set_provider_traits(ctx, rp['id'], [])
    return common.no_content()
