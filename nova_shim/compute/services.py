"""Compute services: one per hypervisor hostname, as Nova's ``os-services``.

nova_shim's compute service may serve several hypervisor hostnames (the
all-in-one's simulated hosts); each is a compute host of its own to the
scheduler and to the API, with a ``services`` row. A service is up while
this process runs, unless an operator forced it down; the scheduler
never offers a node whose service is down or disabled. Evacuation needs
the instance's service to be down, as in Nova, where an operator forces
down the service of a host that failed (``openstack compute service set
--down HOST nova-compute``).

The API, admin only by Nova's default policy
(``os_compute_api:os-services:list`` and ``:update``):

* ``GET /os-services`` (filters ``host``, ``binary``);
* ``PUT /os-services/{id}`` (2.53 and later): ``{"status": "enabled" |
  "disabled", "disabled_reason": ..., "forced_down": true | false}``;
* ``PUT /os-services/force-down``, ``/disable``, ``/enable`` and
  ``/disable-log-reason`` (before 2.53): ``{"host", "binary", ...}``.
"""

from typing import TYPE_CHECKING
import uuid as uuidlib

import webob

from nova_shim.compute.db import Service
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import http
from nova_shim import exception
from nova_shim.policies import services as service_policies

if TYPE_CHECKING:  # the manager's modules use this one
    from nova_shim.compute.manager import ComputeManager

BINARY = 'nova-compute'
# The names of the changes that took a host and binary before 2.53.
_LEGACY_ACTIONS = ('force-down', 'disable', 'enable', 'disable-log-reason')
_MAX_REASON = 255


def service_uuid(host: str) -> str:
    """A stable id for the compute service of a hypervisor hostname."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, 'nova-compute.' + host))


def register(deps: ComputeDeps) -> None:
    """A service row for each node this process serves."""
    for host in deps.nodes:
        deps.db.ensure_service(host, service_uuid(host))


def unavailable_hosts(deps: ComputeDeps) -> set[str]:
    """The hosts the scheduler must not offer: down or disabled."""
    return {s.host for s in deps.db.list_services()
            if s.disabled or not s.is_up}


def is_up(deps: ComputeDeps, host: str) -> bool:
    found = [s for s in deps.db.list_services() if s.host == host]
    return bool(found) and found[0].is_up


def view(service: Service) -> dict:
    return {'id': service.uuid, 'binary': BINARY, 'host': service.host,
            'zone': 'nova',
            'status': 'disabled' if service.disabled else 'enabled',
            'state': 'up' if service.is_up else 'down',
            'disabled_reason': service.disabled_reason,
            'forced_down': service.forced_down,
            'updated_at': service.updated_at.strftime('%Y-%m-%dT%H:%M:%S.%f')}


def list_services(req: webob.Request, manager: 'ComputeManager'
                  ) -> webob.Response:
    _authorize(req, 'list')
    found = manager.deps.db.list_services()
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


def update_service(req: webob.Request, manager: 'ComputeManager',
                   service_id: str) -> webob.Response:
    _authorize(req, 'update')
    body = http.read_json(req)
    if not isinstance(body, dict):
        raise exception.InvalidRequest(reason='the body is a JSON object')
    db = manager.deps.db
    if service_id in _LEGACY_ACTIONS:
        host, values = _legacy_changes(service_id, body)
        if host not in {s.host for s in db.list_services()}:
            raise exception.ComputeHostNotFound(host=host)
        service = db.update_service(host, **values)
        shown = {'host': host, 'binary': BINARY}
        if service_id == 'force-down':
            shown['forced_down'] = service.forced_down
        else:
            shown['status'] = 'disabled' if service.disabled else 'enabled'
            if service_id == 'disable-log-reason':
                shown['disabled_reason'] = service.disabled_reason
        return http.json_response({'service': shown})
    found = [s for s in db.list_services() if s.uuid == service_id]
    if not found:
        raise exception.ServiceNotFound(service_id=service_id)
    service = db.update_service(found[0].host, **_changes(body))
    return http.json_response({'service': view(service)})
