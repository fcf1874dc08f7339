"""``/servers/{id}/os-instance-actions``: a server's actions and their
events, as Nova's API shows them (``openstack server event list``).

* ``GET /servers/{id}/os-instance-actions``: ``{"instanceActions":
  [...]}``, newest first, each with ``action``, ``instance_uuid``,
  ``message`` ('Error' once an event failed), ``project_id``,
  ``request_id``, ``start_time`` and ``user_id``; from 2.58 also
  ``updated_at``, and the list is paged by ``limit`` and ``marker`` (a
  request id) and filtered on ``updated_at`` by ``changes-since`` (and
  from 2.66 ``changes-before``), with a ``next`` link when a page is
  full;
* ``GET /servers/{id}/os-instance-actions/{request_id}``:
  ``{"instanceAction": {..., "events": [...]}}``, each event with
  ``event``, ``start_time``, ``finish_time`` and ``result``.

Who sees what is Nova's: a server of another project is a 404 to anyone
but an admin, then ``os_compute_api:os-instance-actions:list`` or
``:show`` decides (a reader of the project, by default). An action's
events are shown to those whom ``...:events`` allows (admins), with
their ``traceback`` and, from 2.62, their ``host``; from 2.51 to anyone
else too, without those. From 2.62 every event has ``hostId`` (the host
hashed with the project, as Nova's), from 2.84 ``details`` for those
whom ``...:events:details`` allows (admins). From 2.21 the actions of a
deleted server can still be read, as Nova lets them be. Times are
Nova's: UTC without a zone, to the microsecond.

The API records the actions (``recorded``), after the policy check, for
``POST /servers`` (``create``, for each server), ``DELETE
/servers/{id}`` (``delete``) and each server action (Nova's name of it,
``ACTION_NAMES``). A request the compute refuses (a 4xx) leaves no
action, as in Nova, where the compute API refuses before recording.
"""

import datetime
import hashlib
import logging
from typing import Any, Callable
import urllib.parse

import webob

from nova_shim.api import http
from nova_shim.compute import actions
from nova_shim.compute.manager import ComputeManager
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.policies import instance_actions as action_policies

LOG = logging.getLogger(__name__)

# Nova's action names for the server actions' keys; any other key is
# its own name.
ACTION_NAMES = {
    'os-start': 'start', 'os-stop': 'stop', 'reboot': 'reboot',
    'pause': 'pause', 'unpause': 'unpause', 'rebuild': 'rebuild',
    'shelve': 'shelve', 'shelveOffload': 'shelveOffload',
    'unshelve': 'unshelve', 'rescue': 'rescue', 'unrescue': 'unrescue',
    'evacuate': 'evacuate', 'createImage': 'createImage',
    'createBackup': 'createBackup', 'migrate': 'migrate',
    'resize': 'resize', 'confirmResize': 'confirmResize',
    'revertResize': 'revertResize', 'os-migrateLive': 'live-migration',
    'suspend': 'suspend', 'resume': 'resume',
}
# What the compute refuses a request with: the errors the API answers
# with a 4xx (``nova_shim.api.app.ERRORS``). A request refused so
# leaves no action.
REFUSALS = (
    exception.NotAuthenticated, exception.Forbidden,
    exception.InstanceNotFound, exception.ItemNotFound,
    exception.FlavorExists, exception.ServiceNotFound,
    exception.ComputeHostNotFound, exception.ComputeServiceInUse,
    exception.FlavorNotFound, exception.InstanceInvalidState,
    exception.InstanceNotReady, exception.InstanceDeleting,
    exception.ForbiddenWithAccelerators, exception.NotSupported,
    exception.InvalidRequest, exception.InvalidGlobalAPIVersion,
    exception.NoValidHost, exception.DeviceProfileError,
)

# Microversions that change these routes.
DELETED_SERVERS = (2, 21)
EVENTS_FOR_ALL = (2, 51)
PAGING = (2, 58)
EVENT_HOSTS = (2, 62)
CHANGES_BEFORE = (2, 66)
EVENT_DETAILS = (2, 84)
# The most actions a page holds, as Nova's ``[api] max_limit``.
MAX_LIMIT = 1000
_TIME_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'
ACTION_KEYS = ('action', 'instance_uuid', 'request_id', 'user_id',
               'project_id', 'start_time', 'message')
EVENT_KEYS = ('event', 'start_time', 'finish_time', 'result')


# -- recording ----------------------------------------------------------------


def recorded(manager: ComputeManager, ctx: RequestContext, uuid: str,
             action: str, operation: Callable, *args: Any) -> Any:
    """``operation(*args)``, with ``action`` recorded for the server
    first (so that the work's events find it) and forgotten again if the
    operation is refused: it raises one of ``REFUSALS``, or answers a
    4xx of its own."""
    actions.record_action(manager.deps, ctx, uuid, action)
    try:
        result = operation(*args)
    except REFUSALS:
        _forget(manager, ctx, uuid)
        raise
    if isinstance(result, webob.Response) and 400 <= result.status_code < 500:
        _forget(manager, ctx, uuid)
    return result


def _forget(manager: ComputeManager, ctx: RequestContext, uuid: str) -> None:
    try:
        actions.forget_action(manager.deps, ctx, uuid)
    except Exception:  # noqa: BLE001 - the refusal is the answer
        LOG.warning('instance %s: the action of refused request %s was '
                    'not forgotten', uuid, ctx.request_id, exc_info=True)


# -- reading ------------------------------------------------------------------


def _time(value: datetime.datetime | None) -> str | None:
    return value.strftime(_TIME_FORMAT) if value is not None else None


def _version(req: webob.Request) -> tuple[int, int]:
    return req.environ.get(http.VERSION_KEY, (2, 1))


def _authorized_project(req: webob.Request, manager: ComputeManager,
                        uuid: str, rule: str) -> str | None:
    """The server's project, once the caller may read its actions: a
    server of another project is a 404 to anyone but an admin, then
    ``rule`` decides (403). From 2.21 a deleted server's project is the
    one its ``create`` action recorded."""
    ctx = http.project_context(req)
    try:
        project = manager.get(uuid).project_id
    except exception.InstanceNotFound:
        project = actions.deleted_instance_project(manager.deps, uuid) \
            if _version(req) >= DELETED_SERVERS else None
        if project is None:
            raise
    if not ctx.is_admin and project != ctx.project_id:
        raise exception.InstanceNotFound(instance_id=uuid)
    ctx.can(rule, target={'project_id': project})
    return project


def _action_view(action: dict, version: tuple[int, int]) -> dict:
    view = {key: action[key] for key in ACTION_KEYS}
    view['start_time'] = _time(action['start_time'])
    if version >= PAGING:
        view['updated_at'] = _time(action['updated_at'])
    return view


def host_id(host: str | None, project_id: str | None) -> str:
    """Nova's ``hostId``: the host hashed with the project, or ''."""
    if not host:
        return ''
    return hashlib.sha224(((project_id or '') + host).encode()).hexdigest()


def _event_view(event: dict, project_id: str | None, traceback: bool,
                host: bool, hashed_host: bool, details: bool) -> dict:
    view = {key: event[key] for key in EVENT_KEYS}
    view['start_time'] = _time(event['start_time'])
    view['finish_time'] = _time(event['finish_time'])
    if traceback:
        view['traceback'] = event['traceback']
    if host:
        view['host'] = event['host']
    if hashed_host:
        view['hostId'] = host_id(event['host'], project_id)
    if details:
        view['details'] = event['details']
    return view


def _page(req: webob.Request, manager: ComputeManager,
          uuid: str) -> dict[str, Any]:
    """``list_actions``' arguments from the query string (2.58)."""
    allowed = {'limit', 'marker', 'changes-since'}
    if _version(req) >= CHANGES_BEFORE:
        allowed.add('changes-before')
    unknown = sorted(set(req.GET) - allowed)
    if unknown:
        raise exception.InvalidRequest(
            reason='unknown query parameters: %s' % ', '.join(unknown))
    since = http.query_time(req, 'changes-since')
    before = http.query_time(req, 'changes-before')
    if since and before and before < since:
        raise exception.InvalidRequest(
            'The value of changes-since must be less than or equal to '
            'changes-before.')
    after = None
    marker = http.query_value(req, 'marker')
    if marker is not None:
        after = actions.get_action(manager.deps, uuid, marker)
        if after is None:
            raise exception.InvalidRequest(
                'Marker %s could not be found.' % marker)
    return {'limit': http.query_limit(req, MAX_LIMIT), 'after': after,
            'changes_since': since, 'changes_before': before}


def _next_link(req: webob.Request, uuid: str, shown: list[dict],
               limit: int) -> list[dict]:
    """Nova's ``next`` link, when the page is full."""
    if not limit or len(shown) != limit:
        return []
    params = dict(sorted(req.GET.items()))
    params['marker'] = shown[-1]['request_id']
    return [{'rel': 'next', 'href': '%s/v2.1/servers/%s/os-instance-actions'
             '?%s' % (req.application_url.rstrip('/'), uuid,
                      urllib.parse.urlencode(params))}]


def list_actions(req: webob.Request, manager: ComputeManager,
                 uuid: str) -> webob.Response:
    _authorized_project(req, manager, uuid,
                        action_policies.INSTANCE_ACTIONS % 'list')
    version = _version(req)
    page = _page(req, manager, uuid) if version >= PAGING else {}
    shown = [_action_view(a, version)
             for a in actions.list_actions(manager.deps, uuid, **page)]
    body: dict[str, Any] = {'instanceActions': shown}
    if version >= PAGING:
        links = _next_link(req, uuid, shown, page['limit'])
        if links:
            body['links'] = links
    return http.json_response(body)


def show_action(req: webob.Request, manager: ComputeManager, uuid: str,
                request_id: str) -> webob.Response:
    project = _authorized_project(req, manager, uuid,
                                  action_policies.INSTANCE_ACTIONS % 'show')
    action = actions.get_action(manager.deps, uuid, request_id, events=True)
    if action is None:
        raise exception.ItemNotFound('Action %s not found' % request_id)
    version = _version(req)
    view = _action_view(action, version)
    ctx = http.project_context(req)
    target = {'project_id': project}
    all_of_events = ctx.can(action_policies.INSTANCE_ACTIONS % 'events',
                            target=target, fatal=False)
    if all_of_events or version >= EVENTS_FOR_ALL:
        details = version >= EVENT_DETAILS and ctx.can(
            action_policies.INSTANCE_ACTIONS % 'events:details',
            target=target, fatal=False)
        view['events'] = [_event_view(
            event, action['project_id'] or project,
            traceback=all_of_events,
            host=all_of_events and version >= EVENT_HOSTS,
            hashed_host=version >= EVENT_HOSTS, details=details)
            for event in action['events']]
    return http.json_response({'instanceAction': view})
