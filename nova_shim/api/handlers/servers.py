"""Handlers of ``/servers``: list (with details), create, show, delete.

Create takes ``{"server": {"name": ..., "flavorRef": <configured flavor
name>}}`` or an inline ``"flavor": {"vcpus", "ram", "disk",
"extra_specs"}``; ``accel:device_profile`` in the flavor's extra_specs
asks for accelerators. It answers 202 with the server in BUILD; the
build goes on in the background.

Authorization is Nova's: a server of another project is a 404 to anyone
but an admin (``context_is_admin``), then the route's rule decides
(403), with the server's project and user as its target. A list shows
the caller's own project's servers, every project's with
``all_tenants`` (admin by ``...:get_all_tenants``).
"""

from oslo_utils import strutils
import webob

from nova_shim.api.handlers import instance_actions
from nova_shim.api import http
from nova_shim.api import views
from nova_shim.compute import actions
from nova_shim.compute import flavors
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception
from nova_shim.objects import Flavor
from nova_shim.policies import servers as server_policies

# A server name's most characters, as in Nova (the column's length).
MAX_NAME_LENGTH = 255
# The most instances one create request may ask for (max_count).
MAX_COUNT = 100


def target(instance) -> dict:
    return {'project_id': instance.project_id, 'user_id': instance.user_id}


def visible(req: webob.Request, manager: ComputeManager, uuid: str,
             rule: str):
    """The instance, if the caller may see it and ``rule`` lets them
    act on it: an admin sees every instance, anyone else only those of
    their project, and any other is InstanceNotFound (404), as Nova
    answers; then the rule decides (PolicyNotAuthorized, 403)."""
    ctx = http.project_context(req)
    instance = manager.get(uuid)
    if not ctx.is_admin and instance.project_id != ctx.project_id:
        raise exception.InstanceNotFound(instance_id=uuid)
    ctx.can(rule, target=target(instance))
    return instance


def _all_tenants(req: webob.Request) -> bool:
    """Whether ``all_tenants`` asks for every project's servers, read as
    Nova reads it (present and empty is true; else a boolean word)."""
    if 'all_tenants' not in req.GET:
        return False
    value = req.GET['all_tenants']
    if not value:
        return True
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError as exc:
        raise exception.InvalidRequest(reason=str(exc)) from exc


def _listed(req: webob.Request, manager: ComputeManager, view: str) -> list:
    """The servers the caller may list: their project's, or with
    ``all_tenants`` every project's (``project_id``/``tenant_id`` then
    filter); of one multi-create request if ``reservation_id`` is
    given."""
    ctx = http.project_context(req)
    ctx.can(server_policies.SERVERS % view)
    if _all_tenants(req):
        ctx.can(server_policies.SERVERS % (view + ':get_all_tenants'))
        project = req.GET.get('project_id') or req.GET.get('tenant_id')
    else:
        project = ctx.project_id
    found = manager.list_instances(project)
    if project is None and not _all_tenants(req):
        found = [i for i in found if i.user_id == ctx.user_id]
    reservation_id = req.GET.get('reservation_id')
    if reservation_id is not None:
        found = [i for i in found if i.reservation_id == reservation_id]
    return found


def list_servers(req: webob.Request, manager: ComputeManager
                 ) -> webob.Response:
    return http.json_response({'servers': [
        views.server_summary(i) for i in _listed(req, manager, 'index')]})


def list_servers_detail(req: webob.Request, manager: ComputeManager
                        ) -> webob.Response:
    return http.json_response({'servers': [
        views.server(i, **http.view_args(req))
        for i in _listed(req, manager, 'detail')]})


def create_server(req: webob.Request, manager: ComputeManager
                  ) -> webob.Response:
    body = http.read_json(req).get('server')
    if not isinstance(body, dict) or not isinstance(body.get('name'), str) \
            or not body['name']:
        raise exception.InvalidRequest(
            reason='"server" with a "name" (a string) is required')
    if len(body['name']) > MAX_NAME_LENGTH:
        raise exception.InvalidRequest(
            reason='the name is longer than %d characters'
            % MAX_NAME_LENGTH)
    ctx = http.project_context(req)
    ctx.can(server_policies.SERVERS % 'create')
    flavor = _flavor(manager, body)
    min_count, max_count = _counts(body)
    reservation_id = body.get('return_reservation_id', False)
    if not isinstance(reservation_id, bool):
        raise exception.InvalidRequest(
            reason='"return_reservation_id" is a boolean')
    instances = manager.build_instances(ctx, body['name'], flavor,
                                        min_count, max_count,
                                        image_ref=_image_ref(body))
    for instance in instances:
        actions.record_action(manager.deps, ctx, instance.uuid,
                              actions.CREATE)
    if reservation_id:
        return http.json_response(
            {'reservation_id': instances[0].reservation_id}, 202)
    return http.json_response({'server': views.server(
        instances[0], **http.view_args(req))}, 202)


def _image_ref(body: dict) -> str | None:
    """The image ``imageRef`` names (its id, or a link to it, as Nova
    takes one), or None."""
    ref = body.get('imageRef')
    if ref in (None, ''):
        return None
    if not isinstance(ref, str) or len(ref) > MAX_NAME_LENGTH:
        raise exception.InvalidRequest(
            reason='"imageRef" is an image\'s id or a link to it')
    return ref.rstrip('/').rpartition('/')[2] or None


def _flavor(manager: ComputeManager, body: dict) -> Flavor:
    """The flavor ``flavorRef`` names (its id, a link to it as Nova
    takes one, or its name), or the inline ``flavor`` (an object,
    nova_shim's own) if given; FlavorNotFound is a 400, as in Nova."""
    ref = body.get('flavorRef')
    if 'flavorRef' in body and (isinstance(ref, bool) or not isinstance(
            ref, (str, int)) or ref == ''):
        raise exception.InvalidRequest(
            reason='"flavorRef" is a flavor\'s name or id')
    if 'flavor' in body:
        if not isinstance(body['flavor'], dict):
            raise exception.InvalidRequest(
                reason='"flavor" is an object')
        return flavors.from_dict(body['flavor'])
    if ref is None:
        raise exception.InvalidRequest(reason='"flavorRef" is required')
    return manager.get_flavor(str(ref).rstrip('/').rpartition('/')[2])


def _count(body: dict, key: str) -> int:
    """``min_count`` or ``max_count``: an integer, or its digits in a
    string (as Nova's schema takes it), from 1 to MAX_COUNT."""
    value = body.get(key, 1)
    if isinstance(value, str) and value.isdigit() and value.isascii():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 1 <= value <= MAX_COUNT:
        raise exception.InvalidRequest(
            reason='"%s" is an integer from 1 to %d' % (key, MAX_COUNT))
    return value


def _counts(body: dict) -> tuple[int, int]:
    min_count = _count(body, 'min_count')
    max_count = _count(body, 'max_count') if 'max_count' in body \
        else min_count
    if min_count > max_count:
        raise exception.InvalidRequest(
            reason='min_count (%d) is greater than max_count (%d)'
            % (min_count, max_count))
    return min_count, max_count


def show_server(req: webob.Request, manager: ComputeManager,
                uuid: str) -> webob.Response:
    instance = visible(req, manager, uuid, server_policies.SERVERS % 'show')
    arqs = manager.get_arqs(http.project_context(req), instance)
    return http.json_response({'server': views.server(
        instance, arqs, manager.get_hostdevs(instance),
        **http.view_args(req))})


def delete_server(req: webob.Request, manager: ComputeManager,
                  uuid: str) -> webob.Response:
    visible(req, manager, uuid, server_policies.SERVERS % 'delete')
    ctx = http.project_context(req)
    instance_actions.recorded(manager, ctx, uuid, actions.DELETE,
                              manager.delete_instance, ctx, uuid)
    return webob.Response(status=204)


