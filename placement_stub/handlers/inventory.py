"""Handlers for /resource_providers/{uuid}/inventories[/{resource_class}]."""

import webob.exc

from placement_stub.db import inventories
from placement_stub import exception
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import inventory as schema


def _with_defaults(fields: dict) -> dict:
    full = dict(inventories.DEFAULTS)
    full.update({k: v for k, v in fields.items()
                 if k in inventories.FIELDS})
    return full


def _capacity_error(req, rp, name, full):
    """Why an inventory leaves no capacity, or None: its capacity must be
    above 0 (from 1.26, at least 0, so reserved may equal total)."""
    equal_ok = mv.allow_reserved_equal_total(common.version(req))
    capacity = (full['total'] - full['reserved']) * full['allocation_ratio']
    if capacity > 0 or (equal_ok and capacity == 0):
        return None
    return ("Invalid inventory for '%s' on resource provider '%s'. The "
            "reserved value is greater than %s." % (
                name, rp['uuid'],
                'total' if equal_ok else 'or equal to total'))


def validated(req, rp, invs: dict, action='update') -> dict:
    """Fill defaults; 400 for an inventory with no capacity or whose
    min_unit is above its max_unit."""
    result = {}
    for name, fields in invs.items():
        full = _with_defaults(fields)
        error = _capacity_error(req, rp, name, full)
        if error is None and full['min_unit'] > full['max_unit']:
            error = 'min_unit is greater than max_unit for %s.' % name
        if error is not None:
            raise errors.bad_request(
                'Unable to %s inventory for resource provider %s: %s' % (
                    action, rp['uuid'], error))
        result[name] = full
    return result


def _check_generation(rp, generation):
    """409 when the client's provider generation is stale."""
    if generation != rp['generation']:
        raise errors.conflict('resource provider generation conflict',
                              errors.CONCURRENT_UPDATE)


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
    _check_generation(rp, data['resource_provider_generation'])
    invs = validated(req, rp, data['inventories'])
    try:
        generation = inventories.set_inventories(
            ctx, rp, data['resource_provider_generation'], invs)
    except exception.InvalidInput as exc:
        raise errors.bad_request(
            'Unknown resource class in inventory for resource provider '
            '%s: %s' % (rp['uuid'], exc))
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
    """PUT one inventory record: it replaces an existing record only; a
    class the provider has no inventory of is a 400, as in Placement."""
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    name = req.urlvars['resource_class']
    data = common.extract_json(req, schema.PUT_INVENTORY_RECORD_SCHEMA)
    _check_generation(rp, data['resource_provider_generation'])
    invs = validated(req, rp, {name: data})
    if name not in inventories.get_inventories(ctx, [rp['id']])[rp['id']]:
        raise errors.bad_request(
            'No inventory record with resource class for resource provider '
            '%s: No inventory of class %s found.' % (rp['uuid'], name))
    generation = inventories.set_inventories(
        ctx, rp, data['resource_provider_generation'], invs, partial=True)
    return common.json_response(_one(ctx, rp, name, generation))


def create_inventory(req):
    """POST one more inventory record (no generation needed); 409 when
    the provider already has inventory of that class."""
    ctx = common.context(req)
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    data = common.extract_json(req, schema.POST_INVENTORY_SCHEMA)
    name = data['resource_class']
    if name in inventories.get_inventories(ctx, [rp['id']])[rp['id']]:
        raise errors.conflict(
            'Update conflict: Inventory for %s on resource provider %s '
            'already exists.' % (name, rp['uuid']), errors.CONCURRENT_UPDATE)
    invs = validated(req, rp, {name: data}, action='create')
    try:
        generation = inventories.set_inventories(ctx, rp, None, invs,
                                                 partial=True)
    except exception.InvalidInput as exc:
        raise errors.bad_request(
            'Unable to create inventory for resource provider %s: %s'
            % (rp['uuid'], exc))
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
    if not mv.allow_delete_all_inventories(common.version(req)):
        raise errors.http(
            webob.exc.HTTPMethodNotAllowed,
            'The method specified is not allowed for this resource.',
            headers=[('Allow', 'GET, POST, PUT')])
    rp = common.provider_or_404(req, req.urlvars['uuid'])
    inventories.delete_inventory(common.context(req), rp)
    return common.no_content()
