"""Handlers of ``/servers``, ``/servers/{id}/action`` and ``/flavors``.

Create takes ``{"server": {"name": ..., "flavorRef": <configured flavor
name>}}`` or an inline ``"flavor": {"vcpus", "ram", "disk",
"extra_specs"}``; ``accel:device_profile`` in the flavor's extra_specs
asks for accelerators. It answers 202 with the server in BUILD; the
build goes on in the background. Actions answer 202 when done (rebuild
with the server), except unshelve of an offloaded instance, which goes
on in the background like a build. ``ACTIONS`` is the one table of the
actions this API knows.
"""

from typing import Callable

import webob

from nova_shim.compute import http
from nova_shim.compute import flavors
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute import views
from nova_shim import exception

Handler = Callable[..., webob.Response]
# A server name's most characters, as in Nova (the column's length).
MAX_NAME_LENGTH = 255


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


def _project_filter(req: webob.Request) -> str | None:
    ctx = http.project_context(req)
    return None if ctx.is_admin else ctx.project_id


def list_servers(req: webob.Request, manager: ComputeManager
                 ) -> webob.Response:
    return http.json_response({'servers': [
        views.server_summary(i)
        for i in manager.list_instances(_project_filter(req))]})


def list_servers_detail(req: webob.Request, manager: ComputeManager
                        ) -> webob.Response:
    return http.json_response({'servers': [
        views.server(i)
        for i in manager.list_instances(_project_filter(req))]})


def create_server(req: webob.Request, manager: ComputeManager
                  ) -> webob.Response:
    body = http.read_json(req).get('server')
    if not isinstance(body, dict) or not body.get('name'):
        raise exception.InvalidRequest(
            reason='"server" with a "name" is required')
    if len(str(body['name'])) > MAX_NAME_LENGTH:
        raise exception.InvalidRequest(
            reason='the name is longer than %d characters'
            % MAX_NAME_LENGTH)
    if isinstance(body.get('flavor'), dict):
        flavor = flavors.from_dict(body['flavor'])
    elif body.get('flavorRef'):
        flavor = flavors.get_flavor(manager.deps.conf, str(body['flavorRef']))
    else:
        raise exception.InvalidRequest(reason='"flavorRef" is required')
    instance = manager.build_instance(http.project_context(req),
                                      str(body['name']), flavor)
    return http.json_response({'server': views.server(instance)}, 202)


def show_server(req: webob.Request, manager: ComputeManager,
                uuid: str) -> webob.Response:
    instance = manager.get(uuid)
    arqs = manager.get_arqs(http.project_context(req), instance)
    return http.json_response({'server': views.server(
        instance, arqs, manager.get_hostdevs(instance))})


def delete_server(req: webob.Request, manager: ComputeManager,
                  uuid: str) -> webob.Response:
    manager.delete_instance(http.project_context(req), uuid)
    return webob.Response(status=204)


def _reboot(manager: ComputeManager, ctx, uuid: str, args: dict):
    reboot_type = (args or {}).get('type') if isinstance(args, dict) else None
    if not reboot_type:
        raise exception.InvalidRequest(reason='reboot needs a "type"')
    return manager.reboot_instance(ctx, uuid, str(reboot_type).upper())


def _refused(action: str) -> Callable:
    return lambda manager, ctx, uuid, args: manager.refuse(uuid, action)


# action key -> (manager call, whether the response carries the server)
ACTIONS: dict[str, tuple[Callable, bool]] = {
    'os-start': (lambda m, c, u, a: m.start_instance(c, u), False),
    'os-stop': (lambda m, c, u, a: m.stop_instance(c, u), False),
    'reboot': (_reboot, False),
    'pause': (lambda m, c, u, a: m.pause_instance(c, u), False),
    'unpause': (lambda m, c, u, a: m.unpause_instance(c, u), False),
    'rebuild': (lambda m, c, u, a: m.rebuild_instance(c, u), True),
    'shelve': (lambda m, c, u, a: m.shelve_instance(c, u), False),
    'shelveOffload': (lambda m, c, u, a: m.shelve_offload_instance(c, u),
                      False),
    'unshelve': (lambda m, c, u, a: m.unshelve_instance(c, u), False),
    'resize': (_refused('resize'), False),
    'migrate': (_refused('migrate'), False),
    'os-migrateLive': (_refused('live-migrate'), False),
    'suspend': (_refused('suspend'), False),
    'resume': (_refused('resume'), False),
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
    call, with_server = ACTIONS[action]
    manager.get(uuid)  # 404 before anything else
    result = call(manager, http.project_context(req), uuid, args)
    if isinstance(result, webob.Response):
        return result  # an action with an answer of its own
    if with_server:
        return http.json_response({'server': views.server(result)}, 202)
    return webob.Response(status=202)
