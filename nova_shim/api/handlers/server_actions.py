"""``POST /servers/{id}/action``: the server actions.

``ACTIONS`` is the one table of the actions this API knows, with the
policy rule of each (Nova's names). Actions answer 202 when done
(rebuild with the server), except unshelve of an offloaded instance,
which goes on in the background like a build. A server of another
project is a 404 to anyone but an admin, then the action's rule decides
(403), before the body's arguments are read.
"""

import secrets
from typing import Callable

import webob

from nova_shim.api.handlers import image_actions
from nova_shim.api.handlers import servers
from nova_shim.api import http
from nova_shim.api import views
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception
from nova_shim.policies import server_actions as action_policies
from nova_shim.policies import servers as server_policies

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
    servers.visible(req, manager, uuid, rule)  # 404, then 403
    result = call(manager, http.project_context(req), uuid, args)
    if isinstance(result, webob.Response):
        return result  # an action with an answer of its own
    if with_server:
        return http.json_response(
            {'server': views.server(result, **http.view_args(req))}, 202)
    return webob.Response(status=202)
