"""/v2/devices, /v2/deployables and /v2/attributes: the hardware
inventory that agents report, for administrators."""

import re

import pecan

from cyborg_lite import exception
from cyborg_lite import model
from cyborg_lite.api import validation
from cyborg_lite.api import views
from cyborg_lite.api.controllers.v2 import base
from cyborg_lite.api.schemas import attributes as schemas

_FILTER_RE = re.compile(r'^filters(?:\[(\d+)\])?\.(field|value)$')
# Upstream's accepted filter fields; only ``name`` maps to a column.
_FILTER_FIELDS = frozenset({'parent_uuid', 'root_uuid', 'board',
                            'availability', 'interface_type',
                            'instance_uuid', 'limit', 'marker', 'sort_key',
                            'sort_dir', 'name'})


def _deployable_filters():
    """Upstream's ``filters.field=X&filters.value=Y`` query, also indexed
    as ``filters[0].field``."""
    pairs = {}
    for key, value in pecan.request.GET.items():
        match = _FILTER_RE.match(key)
        if match:
            pairs.setdefault(match.group(1) or '', {})[match.group(2)] = value
    filters = {}
    for pair in pairs.values():
        field = pair.get('field')
        if field not in _FILTER_FIELDS or 'value' not in pair:
            raise exception.Invalid(reason='Bad deployable filter %r.' % (
                str(field)[:64],))
        if field == 'name':
            filters['name'] = pair['value']
    return filters


class DevicesController(base.Controller):

    @pecan.expose('json')
    def get_all(self, **kwargs):
        ctx = base.authorize('cyborg:device:get_all')
        # An empty value is no filter, as upstream's "if type:".
        filters = {k: base.query(k) for k in ('type', 'vendor', 'hostname')
                   if base.query(k)}
        items = pecan.request.conductor.device_list(ctx, filters)
        url, version = base.base_url(), pecan.request.version
        return {'devices': [views.device(url, d, version) for d in items]}

    @pecan.expose('json')
    def get_one(self, uuid, **kwargs):
        ctx = base.authorize('cyborg:device:get_one')
        device = pecan.request.conductor.device_get(
            ctx, validation.canonical_id(uuid))
        return views.device(base.base_url(), device, pecan.request.version)

    def _set_status(self, uuid, rule, status):
        ctx = base.authorize(rule)
        pecan.request.conductor.device_set_status(
            ctx, validation.canonical_id(uuid), status)
        return base.empty_ok()

    @base.expose_no_body
    def enable(self, uuid, **kwargs):
        return self._set_status(uuid, 'cyborg:device:enable',
                                model.DeviceStatus.ENABLED.value)

    @base.expose_no_body
    def disable(self, uuid, **kwargs):
        return self._set_status(uuid, 'cyborg:device:disable',
                                model.DeviceStatus.MAINTAINING.value)


class DeployablesController(base.Controller):

    @pecan.expose('json')
    def get_all(self, **kwargs):
        ctx = base.authorize('cyborg:deployable:get_all')
        items = pecan.request.conductor.deployable_list(
            ctx, _deployable_filters())
        url = base.base_url()
        return {'deployables': [views.deployable(url, d) for d in items]}

    @pecan.expose('json')
    def get_one(self, uuid, **kwargs):
        ctx = base.authorize('cyborg:deployable:get_one')
        uuid = validation.uuid_param(uuid, 'deployable uuid')
        return views.deployable(
            base.base_url(), pecan.request.conductor.deployable_get(ctx,
                                                                    uuid))

    @pecan.expose('json')
    def patch(self, *path, **kwargs):
        # The guard routes only /deployables/{uuid}/program here.
        uuid = base.path_id(path)
        ctx = base.authorize('cyborg:deployable:program')
        uuid = validation.uuid_param(uuid, 'deployable uuid')
        body = validation.validate(validation.json_body(pecan.request),
                                   schemas.PATCH_PROGRAM_SCHEMA_V2_0)
        image = body[0]['value'][0]['image_uuid']
        dep = pecan.request.conductor.deployable_program(ctx, uuid, image)
        return views.deployable(base.base_url(), dep)


class AttributesController(base.Controller):

    @pecan.expose('json')
    def get_all(self, **kwargs):
        ctx = base.authorize('cyborg:attribute:get_all')
        filters = {}
        if base.query('key'):
            filters['key'] = base.query('key')
        if base.query('deployable_id') is not None:
            try:
                deployable_id = int(base.query('deployable_id'))
            except ValueError:
                deployable_id = None
            # Ids are 32-bit integers: out of that range PostgreSQL
            # would refuse the comparison itself.
            if deployable_id is None or not (
                    -schemas.DEPLOYABLE_ID_MAX - 1 <= deployable_id
                    <= schemas.DEPLOYABLE_ID_MAX):
                raise exception.Invalid(reason='deployable_id must be a '
                                               '32-bit integer.')
            filters['deployable_id'] = deployable_id
        items = pecan.request.conductor.attribute_list(ctx, filters)
        url = base.base_url()
        return {'attributes': [views.attribute(url, a) for a in items]}

    @pecan.expose('json')
    def get_one(self, uuid, **kwargs):
        ctx = base.authorize('cyborg:attribute:get_one')
        return views.attribute(
            base.base_url(), pecan.request.conductor.attribute_get(
                ctx, validation.canonical_id(uuid)))

    @pecan.expose('json')
    def post(self, **kwargs):
        ctx = base.authorize('cyborg:attribute:create')
        body = validation.json_body(pecan.request)
        # openstacksdk, and so both ``openstack accelerator device
        # attribute create`` commands, wrap the attribute in its
        # resource key; upstream's API reference shows it bare.
        if isinstance(body, dict) and list(body) == ['attribute']:
            body = body['attribute']
        body = validation.validate(body, schemas.POST_ATTRIBUTE_SCHEMA_V2_0)
        body['deployable_id'] = int(body['deployable_id'])
        if body['deployable_id'] > schemas.DEPLOYABLE_ID_MAX:
            raise exception.Invalid(reason='deployable_id must be a 32-bit '
                                           'integer.')
        attr = pecan.request.conductor.attribute_create(ctx, body)
        base.set_status(201)
        return views.attribute(base.base_url(), attr)

    @base.expose_no_body
    def delete(self, *path, **kwargs):
        # The guard routes only /attributes/{uuid} here.
        uuid = base.path_id(path)
        ctx = base.authorize('cyborg:attribute:delete')
        pecan.request.conductor.attribute_delete(
            ctx, validation.canonical_id(uuid))
        return base.no_content()
