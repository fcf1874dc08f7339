"""Handlers for /resource_providers/{uuid}/inventories[/{resource_class}]."""

from placement_stub.db import inventories
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import inventory as schema


def _with_defaults(fields: dict) -> dict:
    full = dict(inventories.DEFAULTS)
    full.update({k: v for k, v in fields.items()
                 if k in inventories.FIELDS})
    return full


def _validate(req, rp, invs: dict) -> dict:
    """Fill defaults; reserved must stay below (from 1.26: up to) total."""
    equal_ok = mv.allow_reserved_equal_total(common.version(req))
    result = {}
    for name, fields in invs.items():
        full = _with_defaults(fields)
        too_big = (full['reserved'] > full['total'] if equal_ok
                   else full['reserved'] >= full['total'])
        if too_big:
            raise errors.bad_request(
                "Unable to update inventory for resource provider %s: "
                "Invalid inventory for '%s' on resource provider '%s'. The "
                "reserved value is greater than %s." % (
                    rp['uuid'], name, rp['uuid'],
                    'total' if equal_ok else 'or equal to total'))
        if full['min_unit'] > full['max_unit']:
            raise errors.bad_request(
                "Unable to update inventory for resource provider %s: "
                "min_unit is greater than max_unit for %s." % (
                    rp['uuid'], name))
        result[name] = full
    return result


def _inventories_body(rp_id, generation, ctx) -> dict:
    invs = inventories.get_inventories(ctx, [rp_id])[rp_id]
    return {'resource_provider_generation': generation, 'inventories': invs}


def get_inventories(req):
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response(
        _inventories_body(rp['id'], rp['generation'], ctx))


def set_inventories(req):
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    data = common.extract_json(req, schema.PUT_INVENTORY_SCHEMA)
    invs = _validate(req, rp, data['inventories'])
    generation = inventories.set_inventories(
        ctx, rp, data['resource_provider_generation'], invs)
    return common.json_response(_inventories_body(rp['id'], generation, ctx))


def _one(ctx, rp, name, generation):
    inv = inventories.get_inventories(ctx, [rp['id']])[rp['id']].get(name)
    if inv is None:
        raise errors.not_found(
            'No inventory of class %s for %s' % (name, rp['uuid']))
    return dict(inv, resource_provider_generation=generation)


def get_inventory(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    return common.json_response(_one(
        common.context(req), rp, req.urlvars['resource_class'],
        rp['generation']))


def update_inventory(req):
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    name = req.urlvars['resource_class']
    data = common.extract_json(req, schema.PUT_INVENTORY_RECORD_SCHEMA)
    invs = _validate(req, rp, {name: data})
    generation = inventories.set_inventories(
        ctx, rp, data['resource_provider_generation'], invs, partial=True)
    return common.json_response(_one(ctx, rp, name, generation))


def create_inventory(req):
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    data = common.extract_json(req, schema.POST_INVENTORY_SCHEMA)
    name = data['resource_class']
    if name in inventories.get_inventories(ctx, [rp['id']])[rp['id']]:
        raise errors.conflict('Inventory for %s on resource provider %s '
                              'already exists.' % (name, rp['uuid']))
    invs = _validate(req, rp, {name: data})
    generation = inventories.set_inventories(
        ctx, rp, data['resource_provider_generation'], invs, partial=True)
    location = '%s/resource_providers/%s/inventories/%s' % (
        req.script_name, rp['uuid'], name)
    return common.json_response(_one(ctx, rp, name, generation), status=201,
                                headers={'Location': location})


def delete_inventory(req):
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    inventories.delete_inventory(common.context(req), rp,
                                 req.urlvars['resource_class'])
    return common.no_content()


def delete_inventories(req):
    common.require(req, mv.allow_delete_all_inventories)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    inventories.delete_inventory(common.context(req), rp)
    return common.no_content()
