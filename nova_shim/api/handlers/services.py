"""``/os-services``: the compute services, as Nova's API serves them.

Admin only by Nova's default policy (``os_compute_api:os-services:list``
and ``:update``):

* ``GET /os-services`` (filters ``host``, ``binary``);
* ``PUT /os-services/{id}`` (2.53 and later): ``{"status": "enabled" |
  "disabled", "disabled_reason": ..., "forced_down": true | false}``;
* ``PUT /os-services/force-down``, ``/disable``, ``/enable`` and
  ``/disable-log-reason`` (before 2.53): ``{"host", "binary", ...}``.
"""

import webob

from nova_shim.api import http
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute.services import BINARY
from nova_shim import exception
from nova_shim.policies import services as service_policies

# The names of the changes that took a host and binary before 2.53.
_LEGACY_ACTIONS = ('force-down', 'disable', 'enable', 'disable-log-reason')
_MAX_REASON = 255


def view(service) -> dict:
    return {'id': service.uuid, 'binary': BINARY, 'host': service.host,
            'zone': 'nova',
            'status': 'disabled' if service.disabled else 'enabled',
            'state': 'up' if service.is_up else 'down',
            'disabled_reason': service.disabled_reason,
            'forced_down': service.forced_down,
            'updated_at': service.updated_at.strftime('%Y-%m-%dT%H:%M:%S.%f')}


def list_services(req: webob.Request, manager: ComputeManager
                  ) -> webob.Response:
    _authorize(req, 'list')
    found = manager.list_services()
    host = req.GET.get('host')
    binary = req.GET.get('binary')
    if host is not None:
        found = [s for s in found if s.host == host]
    if binary is not None and binary != BINARY:
        found = []
    return http.json_response({'services': [view(s) for s in found]})


def _authorize(req: webob.Request, action: str) -> None:
    """The policy's ``os_compute_api:os-services:<action>`` (admin by
    default), with no target, as Nova checks it."""
    http.request_context(req).can(service_policies.SERVICES % action,
                                  target={})


def _bool(body: dict, key: str) -> bool:
    value = body[key]
    if not isinstance(value, bool):
        raise exception.InvalidRequest(reason='"%s" must be a boolean' % key)
    return value


def _changes(body: dict) -> dict:
    """The columns that a 2.53 update body sets."""
    unknown = set(body) - {'status', 'disabled_reason', 'forced_down'}
    if unknown or not body:
        raise exception.InvalidRequest(
            reason='an update takes "status", "disabled_reason" and '
                   '"forced_down"%s' % (
                       '; not %s' % ', '.join(sorted(unknown))
                       if unknown else ''))
    values: dict = {}
    if 'status' in body:
        if body['status'] not in ('enabled', 'disabled'):
            raise exception.InvalidRequest(
                reason='"status" is "enabled" or "disabled"')
        values['disabled'] = body['status'] == 'disabled'
        if not values['disabled']:
            values['disabled_reason'] = None
    if 'disabled_reason' in body:
        reason = body['disabled_reason']
        if body.get('status') != 'disabled':
            raise exception.InvalidRequest(
                reason='"disabled_reason" goes with "status": "disabled"')
        if not isinstance(reason, str) or not reason.strip() or \
                len(reason) > _MAX_REASON:
            raise exception.InvalidRequest(
                reason='"disabled_reason" is a string of 1 to %d '
                       'characters' % _MAX_REASON)
        values['disabled_reason'] = reason
    if 'forced_down' in body:
        values['forced_down'] = _bool(body, 'forced_down')
    return values


def _legacy_changes(action: str, body: dict) -> tuple[str, dict]:
    """The host and the columns of a change made before 2.53. As Nova's
    schema, each takes ``host``, ``binary``, ``disabled_reason`` and
    ``forced_down``, and nothing else."""
    unknown = set(body) - {'host', 'binary', 'disabled_reason',
                           'forced_down'}
    if unknown:
        raise exception.InvalidRequest(
            reason='%s takes "host", "binary", "disabled_reason" and '
                   '"forced_down"; not %s' % (action,
                                              ', '.join(sorted(unknown))))
    if 'forced_down' in body:
        _bool(body, 'forced_down')
    reason = body.get('disabled_reason')
    if 'disabled_reason' in body and not (
            isinstance(reason, str) and reason.strip() and
            len(reason) <= _MAX_REASON):
        raise exception.InvalidRequest(
            reason='"disabled_reason" is a string of 1 to %d characters'
            % _MAX_REASON)
    host, binary = body.get('host'), body.get('binary')
    if not isinstance(host, str) or binary != BINARY:
        raise exception.InvalidRequest(
            reason='"host" and "binary": "%s" are required' % BINARY)
    if action == 'force-down':
        if 'forced_down' not in body:
            raise exception.InvalidRequest(reason='"forced_down" is required')
        return host, {'forced_down': _bool(body, 'forced_down')}
    if action == 'enable':
        return host, {'disabled': False, 'disabled_reason': None}
    reason = body.get('disabled_reason') if action == 'disable-log-reason' \
        else None
    if action == 'disable-log-reason' and not (
            isinstance(reason, str) and reason.strip() and
            len(reason) <= _MAX_REASON):
        raise exception.InvalidRequest(
            reason='"disabled_reason" is a string of 1 to %d characters'
            % _MAX_REASON)
    return host, {'disabled': True, 'disabled_reason': reason}


def update_service(req: webob.Request, manager: ComputeManager,
                   service_id: str) -> webob.Response:
    _authorize(req, 'update')
    body = http.read_json(req)
    if not isinstance(body, dict):
        raise exception.InvalidRequest(reason='the body is a JSON object')
    if service_id in _LEGACY_ACTIONS:
        host, values = _legacy_changes(service_id, body)
        if host not in {s.host for s in manager.list_services()}:
            raise exception.ComputeHostNotFound(host=host)
        service = manager.update_service(host, **values)
        shown = {'host': host, 'binary': BINARY}
        if service_id == 'force-down':
            shown['forced_down'] = service.forced_down
        else:
            shown['status'] = 'disabled' if service.disabled else 'enabled'
            if service_id == 'disable-log-reason':
                shown['disabled_reason'] = service.disabled_reason
        return http.json_response({'service': shown})
    found = [s for s in manager.list_services() if s.uuid == service_id]
    if not found:
        raise exception.ServiceNotFound(service_id=service_id)
    service = manager.update_service(found[0].host, **_changes(body))
    return http.json_response({'service': view(service)})
