"""``POST /os-server-external-events``, as Nova's API at 2.82.

Each event names an instance (``server_uuid``), an event ``name``, an
optional ``status`` (``completed`` by default) and a ``tag``.
``accelerator-request-bound`` needs microversion 2.82 and a tag (the
ARQ uuid); a request breaking either rule, or with malformed events, is
a 400. Per event: 404 when the instance is unknown, 422 when it has no
host yet (Cyborg ignores a 207 made only of 422s), else 200 and the
event goes to whoever waits for it. The answer is 200, or 207 when any
event failed, with ``{"events": [... each with "code"]}``.

Policy: ``os_compute_api:os-server-external-events:create``, a service
(the ``service`` role, as Cyborg's user has) or an admin by Nova's
default (``service_or_admin``); anyone else is refused (403) before the
body is read.
"""

import webob

from nova_shim.api import http
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception

EVENT_NAMES = {'network-changed', 'network-vif-plugged',
               'network-vif-unplugged', 'network-vif-deleted',
               'volume-extended', 'power-update', 'volume-reimaged',
               'accelerator-request-bound'}
# Event name -> the microversion that introduced it.
EVENT_VERSIONS = {'volume-extended': (2, 51), 'power-update': (2, 76),
                  'accelerator-request-bound': (2, 82),
                  'volume-reimaged': (2, 93)}
TAG_REQUIRED = {'volume-extended', 'power-update',
                'accelerator-request-bound', 'volume-reimaged'}
STATUSES = {'failed', 'completed', 'in-progress'}
_KEYS = {'name', 'server_uuid', 'status', 'tag'}
POLICY = 'os_compute_api:os-server-external-events:create'


def _validate(event: object, version: tuple[int, int]) -> dict:
    if not isinstance(event, dict) or set(event) - _KEYS:
        raise exception.InvalidRequest(reason='bad event %r' % (event,))
    name, server = event.get('name'), event.get('server_uuid')
    if not isinstance(name, str) or name not in EVENT_NAMES or \
            not isinstance(server, str):
        raise exception.InvalidRequest(
            reason='event needs a known "name" and a "server_uuid": %r'
            % (event,))
    if version < EVENT_VERSIONS.get(name, (2, 0)):
        raise exception.InvalidRequest(
            reason='event %s needs microversion %d.%d'
            % ((name,) + EVENT_VERSIONS[name]))
    event = dict(event)
    event.setdefault('status', 'completed')
    if not isinstance(event['status'], str) or \
            event['status'] not in STATUSES:
        raise exception.InvalidRequest(
            reason='bad event status %r' % event['status'])
    tag = event.get('tag')
    if name in TAG_REQUIRED and not tag:
        raise exception.InvalidRequest(
            reason='event %s requires a tag' % name)
    if tag is not None and (not isinstance(tag, str) or len(tag) > 255):
        raise exception.InvalidRequest(reason='bad tag %r' % (tag,))
    return event


def create(req: webob.Request, manager: ComputeManager) -> webob.Response:
    http.request_context(req).can(POLICY, target={})
    body = http.read_json(req)
    events = body.get('events')
    if not isinstance(events, list) or not events:
        raise exception.InvalidRequest(reason='"events" must be a '
                                              'non-empty list')
    version = req.environ[http.VERSION_KEY]
    events = [_validate(event, version) for event in events]
    result = 200
    for event in events:
        try:
            instance = manager.get(event['server_uuid'])
        except exception.InstanceNotFound:
            event.update(code=404, status='failed')
            result = 207
            continue
        if not instance.host:
            event.update(code=422, status='failed')
            result = 207
            continue
        event['code'] = 200
        manager.deps.events.deliver(instance.uuid, event['name'],
                                    event.get('tag'), event['status'])
    if all(event['code'] != 200 for event in events):
        # As Nova: a request none of whose events is accepted is a 404.
        raise exception.InstanceNotFound(
            message='No instances found for any event')
    return http.json_response({'events': events}, result)
