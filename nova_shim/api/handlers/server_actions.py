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
from nova_shim.api.handlers import instance_actions
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


def _no_arguments(action: str, args) -> None:
    if args is not None:
        raise exception.InvalidRequest(reason='"%s" takes null' % action)


def _migrate(manager: ComputeManager, ctx, uuid: str, args):
    """A cold migration; from 2.56 to a ``host`` the caller names (its
    own rule, admin by default)."""
    if args is not None and not isinstance(args, dict):
        raise exception.InvalidRequest(reason='"migrate" takes null or an '
                                              'object')
    args = args or {}
    unknown = set(args) - {'host'}
    if unknown:
        raise exception.InvalidRequest(
            reason='Additional properties are not allowed (%s)'
                   % ', '.join(sorted(unknown)))
    host = args.get('host')
    if host is not None:
        if not isinstance(host, str) or not host or len(host) > 255:
            raise exception.InvalidRequest(reason='"host" is a host name')
        instance = manager.get(uuid)
        ctx.can(action_policies.MIGRATE % 'migrate:host',
                target=servers.target(instance))
    return manager.migrate_instance(ctx, uuid, host)


def _resize(manager: ComputeManager, ctx, uuid: str, args):
    """``{"flavorRef": ...}`` (and Nova's ``OS-DCF:diskConfig``)."""
    if not isinstance(args, dict) or 'flavorRef' not in args:
        raise exception.InvalidRequest(reason='"resize" needs a "flavorRef"')
    unknown = set(args) - {'flavorRef', 'OS-DCF:diskConfig'}
    if unknown:
        raise exception.InvalidRequest(
            reason='Additional properties are not allowed (%s)'
                   % ', '.join(sorted(unknown)))
    flavor_ref = args['flavorRef']
    if isinstance(flavor_ref, int) and not isinstance(flavor_ref, bool):
        flavor_ref = str(flavor_ref)
    if not isinstance(flavor_ref, str) or not flavor_ref.strip():
        raise exception.InvalidRequest(reason='"flavorRef" is a flavor id')
    if args.get('OS-DCF:diskConfig', 'AUTO') not in ('AUTO', 'MANUAL'):
        raise exception.InvalidRequest(
            reason='"OS-DCF:diskConfig" is AUTO or MANUAL')
    return manager.resize_instance(ctx, uuid, flavor_ref.strip())


def _confirm_resize(manager: ComputeManager, ctx, uuid: str,
                    args) -> webob.Response:
    """204, as Nova answers a confirm."""
    _no_arguments('confirmResize', args)
    manager.confirm_resize(ctx, uuid)
    return webob.Response(status=204)


def _revert_resize(manager: ComputeManager, ctx, uuid: str, args):
    _no_arguments('revertResize', args)
    return manager.revert_resize(ctx, uuid)


def _refused(action: str) -> Callable:
    return lambda manager, ctx, uuid, args: manager.refuse(uuid, action)


# Arguments of an action that need a microversion: (action, argument)
# -> the first version that has them (before it, Nova's schema refuses
# them as additional properties).
ARGUMENT_VERSIONS = {('migrate', 'host'): (2, 56)}

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
    'resize': (_SERVERS % 'resize', _resize, False),
    'confirmResize': (_SERVERS % 'confirm_resize', _confirm_resize, False),
    'revertResize': (_SERVERS % 'revert_resize', _revert_resize, False),
    'migrate': (action_policies.MIGRATE % 'migrate', _migrate, False),
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
    version = req.environ.get(http.VERSION_KEY, (2, 1))
    for (name, argument), since in ARGUMENT_VERSIONS.items():
        if name == action and isinstance(args, dict) and \
                argument in args and version < since:
            raise exception.InvalidRequest(
                reason='Additional properties are not allowed (%s was '
                       'unexpected) before microversion %d.%d'
                       % (argument, *since))
    servers.visible(req, manager, uuid, rule)  # 404, then 403
    ctx = http.project_context(req)
    result = instance_actions.recorded(
        manager, ctx, uuid, instance_actions.ACTION_NAMES.get(action, action),
        call, manager, ctx, uuid, args)
    if isinstance(result, webob.Response):
        return result  # an action with an answer of its own
    if with_server:
        return http.json_response(
            {'server': views.server(result, **http.view_args(req))}, 202)
    return webob.Response(status=202)
