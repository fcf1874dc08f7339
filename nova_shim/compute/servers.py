"""Handlers of ``/servers``, ``/servers/{id}/action`` and ``/flavors``.

Create takes ``{"server": {"name": ..., "flavorRef": <configured flavor
name>}}`` or an inline ``"flavor": {"vcpus", "ram", "disk",
"extra_specs"}``; ``accel:device_profile`` in the flavor's extra_specs
asks for accelerators. It answers 202 with the server in BUILD; the
build goes on in the background. Actions answer 202 when done (rebuild
with the server), except unshelve of an offloaded instance, which goes
on in the background like a build. ``ACTIONS`` is the one table of the
actions this API knows, with the policy rule of each.

Authorization is Nova's: a server of another project is a 404 to anyone
but an admin (``context_is_admin``), then the action's rule decides
(403), with the server's project and user as its target. A list shows
the caller's own project's servers, every project's with
``all_tenants`` (admin by ``...:get_all_tenants``).
"""

import secrets
from typing import Callable

from oslo_utils import strutils
import webob

from nova_shim.compute import http
from nova_shim.compute import flavors
from nova_shim.compute import image_actions
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute import views
from nova_shim import exception
from nova_shim.policies import server_actions as action_policies
from nova_shim.policies import servers as server_policies

Handler = Callable[..., webob.Response]
# A server name's most characters, as in Nova (the column's length).
MAX_NAME_LENGTH = 255
# The most instances one create request may ask for (max_count).
MAX_COUNT = 100


def versions(req: webob.Request, manager: ComputeManager) -> webob.Response:
    return http.json_response({'version': {
        'id': 'v2.1', 'status': 'CURRENT', 'min_version': http.MIN_VERSION,
        'version': http.MAX_VERSION}})


def list_flavors(req: webob.Request, manager: ComputeManager
                 ) -> webob.Response:
    known = flavors.load_flavors(manager.deps.conf)
    return http.json_response({'flavors': [f.to_dict()
                                          for f in known.values()]})


def get_flavor(req: webob.Request, manager: ComputeManager,
               flavor: str) -> webob.Response:
    try:
        found = flavors.get_flavor(manager.deps.conf, flavor)
    except exception.FlavorNotFound as exc:
        return http.error_response(404, 'itemNotFound', str(exc))
    return http.json_response({'flavor': found.to_dict()})


def _target(instance) -> dict:
    return {'project_id': instance.project_id, 'user_id': instance.user_id}


def _visible(req: webob.Request, manager: ComputeManager, uuid: str,
             rule: str):
    """The instance, if the caller may see it and ``rule`` lets them
    act on it: an admin sees every instance, anyone else only those of
    their project, and any other is InstanceNotFound (404), as Nova
    answers; then the rule decides (PolicyNotAuthorized, 403)."""
    ctx = http.project_context(req)
    instance = manager.get(uuid)
    if not ctx.is_admin and instance.project_id != ctx.project_id:
        raise exception.InstanceNotFound(instance_id=uuid)
    ctx.can(rule, target=_target(instance))
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
        views.server(i) for i in _listed(req, manager, 'detail')]})


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
                                        min_count, max_count)
    if reservation_id:
        return http.json_response(
            {'reservation_id': instances[0].reservation_id}, 202)
    return http.json_response({'server': views.server(instances[0])}, 202)


def _flavor(manager: ComputeManager, body: dict) -> flavors.Flavor:
    """The inline ``flavor`` (an object) if given, else the configured
    one ``flavorRef`` names (a string or an integer)."""
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
    return flavors.get_flavor(manager.deps.conf, str(ref))


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
    instance = _visible(req, manager, uuid, server_policies.SERVERS % 'show')
    arqs = manager.get_arqs(http.project_context(req), instance)
    return http.json_response({'server': views.server(
        instance, arqs, manager.get_hostdevs(instance))})


def delete_server(req: webob.Request, manager: ComputeManager,
                  uuid: str) -> webob.Response:
    _visible(req, manager, uuid, server_policies.SERVERS % 'delete')
    manager.delete_instance(http.project_context(req), uuid)
    return webob.Response(status=204)


def _reboot(manager: ComputeManager, ctx, uuid: str, args: dict):
    reboot_type = (args or {}).get('type') if isinstance(args, dict) else None
    if not reboot_type:
        raise exception.InvalidRequest(reason='reboot needs a "type"')
    return manager.reboot_instance(ctx, uuid, str(reboot_type).upper())


def _rescue(manager: ComputeManager, ctx, uuid: str, args) -> webob.Response:
    """Nova answers a rescue with the rescue image's admin password."""
    if args is not None and not isinstance(args, dict):
        raise exception.InvalidRequest(reason='"rescue" takes an object')
    manager.rescue_instance(ctx, uuid)
    return http.json_response(
        {'adminPass': (args or {}).get('adminPass') or
         secrets.token_urlsafe(9)})


def _evacuate(manager: ComputeManager, ctx, uuid: str,
              args) -> webob.Response:
    """200 without a body (admin only, by Nova's default policy)."""
    if args is not None and not isinstance(args, dict):
        raise exception.InvalidRequest(reason='"evacuate" takes an object')
    host = (args or {}).get('host')
    if host is not None and (not isinstance(host, str) or not host):
        raise exception.InvalidRequest(reason='"host" is a host name')
    manager.evacuate_instance(ctx, uuid, host)
    return webob.Response(status=200)


def _refused(action: str) -> Callable:
    return lambda manager, ctx, uuid, args: manager.refuse(uuid, action)


_SERVERS = server_policies.SERVERS
# action key -> (policy rule, manager call, whether the response carries
# the server)
ACTIONS: dict[str, tuple[str, Callable, bool]] = {
    'os-start': (_SERVERS % 'start',
                 lambda m, c, u, a: m.start_instance(c, u), False),
    'os-stop': (_SERVERS % 'stop',
                lambda m, c, u, a: m.stop_instance(c, u), False),
    'reboot': (_SERVERS % 'reboot', _reboot, False),
    'pause': (action_policies.PAUSE % 'pause',
              lambda m, c, u, a: m.pause_instance(c, u), False),
    'unpause': (action_policies.PAUSE % 'unpause',
                lambda m, c, u, a: m.unpause_instance(c, u), False),
    'rebuild': (_SERVERS % 'rebuild',
                lambda m, c, u, a: m.rebuild_instance(c, u), True),
    'shelve': (action_policies.SHELVE % 'shelve',
               lambda m, c, u, a: m.shelve_instance(c, u), False),
    'shelveOffload': (action_policies.SHELVE % 'shelve_offload',
                      lambda m, c, u, a: m.shelve_offload_instance(c, u),
                      False),
    'unshelve': (action_policies.SHELVE % 'unshelve',
                 lambda m, c, u, a: m.unshelve_instance(c, u), False),
    'rescue': ('os_compute_api:os-rescue', _rescue, False),
    'unrescue': ('os_compute_api:os-unrescue',
                 lambda m, c, u, a: m.unrescue_instance(c, u), False),
    'evacuate': ('os_compute_api:os-evacuate', _evacuate, False),
    'createImage': (_SERVERS % 'create_image', image_actions.create_image,
                    False),
    'createBackup': ('os_compute_api:os-create-backup',
                     image_actions.create_backup, False),
    'resize': (_SERVERS % 'resize', _refused('resize'), False),
    'migrate': (action_policies.MIGRATE % 'migrate', _refused('migrate'),
                False),
    'os-migrateLive': (action_policies.MIGRATE % 'migrate_live',
                       _refused('live-migrate'), False),
    'suspend': (action_policies.SUSPEND % 'suspend', _refused('suspend'),
                False),
    'resume': (action_policies.SUSPEND % 'resume', _refused('resume'),
               False),
}


def server_action(req: webob.Request, manager: ComputeManager,
                  uuid: str) -> webob.Response:
    body = http.read_json(req)
    if len(body) != 1:
        raise exception.InvalidRequest(reason='one action per request')
    (action, args), = body.items()
    if action not in ACTIONS:
        raise exception.InvalidRequest(
            reason='there is no such action: %s' % action)
    rule, call, with_server = ACTIONS[action]
    _visible(req, manager, uuid, rule)  # 404, then 403, before anything
    result = call(manager, http.project_context(req), uuid, args)
    if isinstance(result, webob.Response):
        return result  # an action with an answer of its own
    if with_server:
        return http.json_response({'server': views.server(result)}, 202)
    return webob.Response(status=202)
