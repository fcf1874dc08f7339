"""Handlers of ``/flavors`` and ``/flavors/{id}/os-extra_specs``, as
Nova's ``flavors``, ``flavor_manage`` and ``flavor_extra_specs``.

* ``GET /flavors`` and ``/flavors/detail``: any caller; the public
  flavors, or with ``is_public`` (an admin's filter; ``none`` for all)
  the private ones too; ``GET /flavors/{id}``: one, by id (or, as
  nova_shim adds, by name);
* ``POST /flavors`` (200 with the flavor), ``PUT /flavors/{id}`` (2.55,
  its description) and ``DELETE`` (202): ``os-flavor-manage``, an
  admin's by default; a name or id taken is a 409;
* ``os-extra_specs``: list and show (``:index``, ``:show``: a reader
  or admin), create, update and delete (an admin's). ``accel:
  device_profile`` there makes the flavor's servers accelerated.

A flavor's detail carries its extra specs from 2.61, when the caller
may list them; its description from 2.55.
"""

import uuid as uuidlib

import webob

from nova_shim.api import http
from nova_shim.api.schemas import flavors as schemas
from nova_shim.api.schemas import validate
from nova_shim.api import views
from nova_shim.compute import flavors
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception
from nova_shim.objects import Flavor
from nova_shim.policies import flavors as flavor_policies

MANAGE = flavor_policies.MANAGE
SPECS = flavor_policies.EXTRA_SPECS
DESCRIPTION_VERSION = (2, 55)
# What Nova reads as "every flavor, public or not" in is_public.
_NONE = ('none', 'all')
_TRUE = ('1', 't', 'true', 'on', 'y', 'yes')
_FALSE = ('0', 'f', 'false', 'off', 'n', 'no')


def _is_public(req: webob.Request) -> bool | None:
    """The is_public filter: public flavors for any caller but an admin,
    who may ask for private ones (false) or all (none)."""
    value = req.GET.get('is_public')
    if not http.request_context(req).is_admin or value is None:
        return True
    if value.lower() in _NONE:
        return None
    if value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise exception.InvalidRequest(
        reason='invalid is_public filter [%s]' % value[:100])


def _with_specs(req: webob.Request) -> bool:
    return http.request_context(req).can(SPECS % 'index', fatal=False)


def _detail(req: webob.Request, flavor: Flavor) -> dict:
    return views.flavor(flavor, extra_specs=_with_specs(req),
                        **http.view_args(req))


def list_flavors(req: webob.Request, manager: ComputeManager
                 ) -> webob.Response:
    found = manager.list_flavors(_is_public(req))
    if req.path_info.rstrip('/').endswith('/detail'):
        return http.json_response({'flavors': [
            _detail(req, f) for f in found]})
    return http.json_response({'flavors': [
        views.flavor_summary(f, **http.view_args(req)) for f in found]})


def _get(manager: ComputeManager, ref: str) -> Flavor:
    try:
        return manager.get_flavor(ref)
    except exception.FlavorNotFound as exc:
        raise exception.ItemNotFound(str(exc)) from exc


def get_flavor(req: webob.Request, manager: ComputeManager,
               flavor: str) -> webob.Response:
    return http.json_response({'flavor': _detail(req, _get(manager,
                                                           flavor))})


def create_flavor(req: webob.Request, manager: ComputeManager
                  ) -> webob.Response:
    ctx = http.request_context(req)
    ctx.can(MANAGE % 'create', target={})
    body = http.read_json(req)
    version = req.environ[http.VERSION_KEY]
    validate(schemas.CREATE_V255 if version >= DESCRIPTION_VERSION
             else schemas.CREATE, body)
    values = body['flavor']
    flavorid = values.get('id')
    created = manager.create_flavor(Flavor(
        name=values['name'],
        flavorid=str(flavorid) if flavorid is not None
        else str(uuidlib.uuid4()),
        vcpus=int(values['vcpus']), memory_mb=int(values['ram']),
        disk_gb=int(values['disk']),
        ephemeral_gb=int(values.get('OS-FLV-EXT-DATA:ephemeral', 0)),
        swap=int(values.get('swap', 0)),
        rxtx_factor=float(values.get('rxtx_factor', 1.0)),
        is_public=str(values.get('os-flavor-access:is_public',
                                 True)).lower() in _TRUE,
        description=values.get('description')))
    return http.json_response({'flavor': _detail(req, created)})


def update_flavor(req: webob.Request, manager: ComputeManager,
                  flavor: str) -> webob.Response:
    if req.environ[http.VERSION_KEY] < DESCRIPTION_VERSION:
        raise exception.VersionNotFound(
            message='Updating a flavor needs microversion 2.55.')
    http.request_context(req).can(MANAGE % 'update', target={})
    body = http.read_json(req)
    validate(schemas.UPDATE_V255, body)
    _get(manager, flavor)
    updated = manager.update_flavor(flavor, body['flavor']['description'])
    return http.json_response({'flavor': _detail(req, updated)})


def delete_flavor(req: webob.Request, manager: ComputeManager,
                  flavor: str) -> webob.Response:
    http.request_context(req).can(MANAGE % 'delete', target={})
    try:
        manager.delete_flavor(flavor)
    except exception.FlavorNotFound as exc:
        raise exception.ItemNotFound(str(exc)) from exc
    return webob.Response(status=202)


# -- os-extra_specs ----------------------------------------------------------


def list_extra_specs(req: webob.Request, manager: ComputeManager,
                     flavor: str) -> webob.Response:
    # A reader's, of the caller's own project, as Nova's target.
    http.request_context(req).can(SPECS % 'index')
    return http.json_response({'extra_specs': dict(
        _get(manager, flavor).extra_specs)})


def create_extra_specs(req: webob.Request, manager: ComputeManager,
                       flavor: str) -> webob.Response:
    http.request_context(req).can(SPECS % 'create', target={})
    body = http.read_json(req)
    validate(schemas.EXTRA_SPECS_CREATE, body)
    specs = _specs(body['extra_specs'])
    _get(manager, flavor)
    manager.set_flavor_extra_specs(flavor, specs)
    return http.json_response({'extra_specs': specs})


def show_extra_spec(req: webob.Request, manager: ComputeManager,
                    flavor: str, key: str) -> webob.Response:
    http.request_context(req).can(SPECS % 'show')
    specs = _get(manager, flavor).extra_specs
    if key not in specs:
        raise exception.ItemNotFound(str(exception.FlavorExtraSpecsNotFound(
            flavor_id=flavor, extra_specs_key=key)))
    return http.json_response({key: specs[key]})


def update_extra_spec(req: webob.Request, manager: ComputeManager,
                      flavor: str, key: str) -> webob.Response:
    http.request_context(req).can(SPECS % 'update', target={})
    body = http.read_json(req)
    validate(schemas.EXTRA_SPEC_UPDATE, body)
    if key not in body:
        raise exception.InvalidRequest(reason='request body and URI '
                                              'mismatch')
    if len(body) > 1:
        raise exception.InvalidRequest(reason='request body contains too '
                                              'many items')
    specs = _specs(body)
    _get(manager, flavor)
    manager.set_flavor_extra_specs(flavor, specs)
    return http.json_response(specs)


def delete_extra_spec(req: webob.Request, manager: ComputeManager,
                      flavor: str, key: str) -> webob.Response:
    http.request_context(req).can(SPECS % 'delete', target={})
    _get(manager, flavor)
    try:
        manager.delete_flavor_extra_spec(flavor, key)
    except exception.FlavorExtraSpecsNotFound as exc:
        raise exception.ItemNotFound(str(exc)) from exc
    return webob.Response(status=202)


def _specs(body: dict) -> dict[str, str]:
    try:
        return flavors.extra_specs(body)
    except ValueError as exc:
        raise exception.InvalidRequest(reason=str(exc)) from exc
