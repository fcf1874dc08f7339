"""Client for the Cyborg v2 API, as Nova's ``nova/accelerator/cyborg.py``.

``get_client(context, conf)`` returns a ``_CyborgClient`` over a
keystoneauth1 adapter for service type ``accelerator`` (the catalog or
``[cyborg] endpoint_override``; paths are relative to the endpoint,
which includes ``/v2``). Method names and behaviour follow Nova, with
two differences: a failure raises an exception that says what Cyborg
answered (``status_code`` and the decoded fault string), and no
microversion header is sent, so Cyborg serves v2.0, as for Nova.
"""

import json
import logging
import re
from typing import Any

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
import requests

from nova_shim import auth
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.scheduler import RequestGroup

LOG = logging.getLogger(__name__)

GROUP = 'cyborg'
ARQ_URL = '/accelerator_requests'
DP_URL = '/device_profiles'
# States in which Cyborg has finished with a bind, one way or the other.
RESOLVED_STATES = frozenset({'Bound', 'BindFailed', 'Deleting'})
_GROUP_KEY = re.compile(r'^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$')


def get_client(context: RequestContext,
               conf: cfg.ConfigOpts) -> '_CyborgClient':
    """A Cyborg client acting for ``context``."""
    return _CyborgClient(context, conf)


def get_device_profile_group_requester_id(dp_group_id: int,
                                          owner: str | None = None) -> str:
    """The requester id of a device profile group, e.g. ``device_profile_0``.

    A port's device profile appends the port UUID (``owner``).
    """
    return 'device_profile_' + str(dp_group_id) + (str(owner) if owner else '')


def get_device_profile_request_groups(
        context: RequestContext, dp_name: str, owner: str | None = None, *,
        conf: cfg.ConfigOpts) -> list[RequestGroup]:
    """Placement request groups for the device profile ``dp_name``."""
    client = get_client(context, conf)
    groups = client.get_device_profile_groups(dp_name)
    return client.get_device_request_groups(groups, owner)


def decode_error(response: requests.Response) -> str:
    """The fault string of a Cyborg error response.

    Cyborg wraps its faults twice::

        {"error_message": "{\\"faultcode\\": \\"Client\\",
                            \\"faultstring\\": \\"...\\",
                            \\"debuginfo\\": null}"}

    keystonemiddleware's 401 is ``{"error": {"message": ...}}``. Other
    bodies are returned as text, shortened.
    """
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if not isinstance(body, dict):
        return response.text[:200]
    message = body.get('error_message', body.get('error'))
    if isinstance(message, str):
        try:
            message = json.loads(message)
        except ValueError:
            return message
    if isinstance(message, dict):
        return str(message.get('faultstring', message.get('message', '')))
    return response.text[:200]


def _describe(response: requests.Response) -> str:
    fault = decode_error(response)
    return 'Cyborg returned %d%s' % (response.status_code,
                                     ': ' + fault if fault else '')


class _CyborgClient:
    """Calls to Cyborg on behalf of one request context."""

    def __init__(self, context: RequestContext, conf: cfg.ConfigOpts) -> None:
        self._client: ks_adapter.Adapter = auth.load_adapter(
            conf, GROUP, auth.get_auth_plugin(conf, GROUP, context),
            global_request_id=context.request_id)

    def _call(self, method: str, url: str, op: str,
              **kwargs: Any) -> requests.Response:
        """Send one request; raise AcceleratorRequestOpFailed on failure.

        ``op`` names the operation in the error message ("get",
        "create", ...). The exception's ``status_code`` is Cyborg's
        HTTP status, or None when Cyborg could not be reached.
        """
        try:
            resp = self._client.request(url, method, **kwargs)
        except ks_exc.ClientException as exc:
            raise exception.AcceleratorRequestOpFailed(
                op=op, msg='Could not communicate with Cyborg: %s' % exc
            ) from exc
        if resp.status_code >= 400:
            raise exception.AcceleratorRequestOpFailed(
                op=op, msg=_describe(resp), status_code=resp.status_code)
        return resp

    def get_device_profile_groups(self, dp_name: str) -> list[dict]:
        """The ``groups`` of the one device profile named ``dp_name``.

        ``GET /device_profiles?name=<dp_name>`` answers::

            {"device_profiles": [{"name": "fpga-dp1", "uuid": "...",
              "groups": [{"resources:FPGA": "1",
                          "trait:CUSTOM_FPGA_INTEL": "required"}], ...}]}

        Raises DeviceProfileError unless exactly one profile matches.
        """
        try:
            resp = self._call('GET', DP_URL, 'get',
                              params={'name': dp_name})
        except exception.AcceleratorRequestOpFailed as exc:
            raise exception.DeviceProfileError(
                name=dp_name, msg=exc.kwargs['msg'],
                status_code=exc.status_code) from exc
        profiles = resp.json().get('device_profiles', [])
        if len(profiles) != 1:
            raise exception.DeviceProfileError(
                name=dp_name, msg='Expected 1 device profile, got %d.'
                % len(profiles), status_code=resp.status_code)
        return profiles[0]['groups']

    @staticmethod
    def get_device_request_groups(dp_groups: list[dict],
                                  owner: str | None = None
                                  ) -> list[RequestGroup]:
        """One Placement request group per device profile group.

        ``resources:FPGA=1`` becomes a resource, ``trait:CUSTOM_X=required``
        (or ``forbidden``) a trait; ``accel:*`` keys are not for Placement.
        """
        request_groups = []
        for index, dp_group in enumerate(dp_groups):
            group = RequestGroup(
                requester_id=get_device_profile_group_requester_id(
                    index, owner))
            for key, value in dp_group.items():
                match = _GROUP_KEY.match(key)
                if match is None:
                    continue
                kind, name = match.group(1), match.group(3).strip()
                if kind == 'resources':
                    group.resources[name] = int(value)
                elif value == 'required':
                    group.required_traits.add(name)
                elif value == 'forbidden':
                    group.forbidden_traits.add(name)
            request_groups.append(group)
        return request_groups

    def create_arqs(self, dp_name: str) -> list[dict]:
        """Create the ARQs of a device profile.

        ``POST /accelerator_requests {"device_profile_name": dp_name}``
        answers 201 ``{"arqs": [{"uuid": ..., "state": "Initial",
        "device_profile_name": ..., "device_profile_group_id": 0,
        "hostname": null, "device_rp_uuid": null, "instance_uuid": null,
        "attach_handle_type": "", "attach_handle_info": {}, ...}]}``.
        """
        resp = self._call('POST', ARQ_URL, 'create',
                          json={'device_profile_name': dp_name})
        arqs = resp.json().get('arqs')
        if not arqs:
            raise exception.AcceleratorRequestOpFailed(
                op='create', msg='Cyborg created no accelerator requests '
                'for device profile %s' % dp_name,
                status_code=resp.status_code)
        return arqs

    def create_arqs_and_match_resource_providers(
            self, dp_name: str, rg_rp_map: dict[str, list[str]]) -> list[dict]:
        """Create ARQs and set each one's ``device_rp_uuid``.

        ``rg_rp_map`` is the scheduler's mapping, e.g.
        ``{"device_profile_0": ["<rp uuid>"]}``: every ARQ of group *i*
        gets the provider of ``device_profile_<i>``. If a group has no
        provider in the map, the new ARQs are deleted again.
        """
        arqs = self.create_arqs(dp_name)
        for arq in arqs:
            requester_id = get_device_profile_group_requester_id(
                arq['device_profile_group_id'])
            providers = rg_rp_map.get(requester_id)
            if not providers:
                self.delete_arqs_by_uuid([a['uuid'] for a in arqs])
                raise exception.AcceleratorRequestOpFailed(
                    op='create', msg='no resource provider for request '
                    'group %s' % requester_id)
            arq['device_rp_uuid'] = providers[0]
        return arqs

    def bind_arqs(self, bindings: dict[str, dict[str, str]]) -> None:
        """Bind ARQs to an instance on a host.

        ``bindings`` is ``{arq_uuid: {"hostname": ..., "device_rp_uuid":
        ..., "instance_uuid": ...}}``; it is sent as ``PATCH
        /accelerator_requests`` with body ``{arq_uuid: [{"path":
        "/hostname", "op": "add", "value": ...}, ...]}`` (202, no body).
        Raises AcceleratorRequestBindingFailed, whose ``arqs`` lists the
        ARQ UUIDs.
        """
        patch = {arq_uuid: [{'path': '/' + field, 'op': 'add', 'value': value}
                            for field, value in binding.items()]
                 for arq_uuid, binding in bindings.items()}
        try:
            self._call('PATCH', ARQ_URL, 'bind', json=patch)
        except exception.AcceleratorRequestOpFailed as exc:
            raise exception.AcceleratorRequestBindingFailed(
                arqs=list(bindings), status_code=exc.status_code,
                msg='%s. Binding failed for ARQ UUIDs: %s'
                % (exc.kwargs['msg'], ','.join(bindings))) from exc

    def unbind_arqs(self, arq_uuids: list[str]) -> None:
        """Unbind ARQs (``PATCH`` with ``remove`` of ``/hostname``,
        ``/device_rp_uuid`` and ``/instance_uuid`` for each; 202): Cyborg
        frees their attach handles (an mdev is removed) and they are
        Unbound, with no instance, to be bound again or deleted. Raises
        AcceleratorRequestOpFailed."""
        if not arq_uuids:
            return
        patch = {arq_uuid: [{'path': '/' + field, 'op': 'remove'}
                            for field in ('hostname', 'device_rp_uuid',
                                          'instance_uuid')]
                 for arq_uuid in arq_uuids}
        self._call('PATCH', ARQ_URL, 'unbind', json=patch)

    def get_arqs_for_instance(self, instance_uuid: str,
                              only_resolved: bool = False) -> list[dict]:
        """The ARQs of an instance (``GET ?instance=``; ``{"arqs": [...]}``).

        With ``only_resolved``, only those in Bound, BindFailed or
        Deleting. No ARQ at all is an error, as in Nova.
        """
        resp = self._call('GET', ARQ_URL, 'get',
                          params={'instance': instance_uuid})
        arqs = resp.json().get('arqs')
        if not arqs:
            raise exception.AcceleratorRequestOpFailed(
                op='get', msg='Cyborg returned no accelerator requests for '
                'instance %s' % instance_uuid, status_code=resp.status_code)
        if only_resolved:
            arqs = [arq for arq in arqs if arq['state'] in RESOLVED_STATES]
        return arqs

    def get_arq_uuids_for_instance(self, instance_uuid: str) -> list[str]:
        """The UUIDs of ``get_arqs_for_instance``."""
        return [arq['uuid'] for arq in
                self.get_arqs_for_instance(instance_uuid)]

    def get_arq_by_uuid(self, arq_uuid: str) -> dict:
        """One ARQ (``GET /accelerator_requests/<uuid>``), as a dict."""
        return self._call('GET', '%s/%s' % (ARQ_URL, arq_uuid), 'get').json()

    def delete_arqs_for_instance(self, instance_uuid: str) -> None:
        """Unbind and delete an instance's ARQs (``DELETE ?instance=``).

        Idempotent in Cyborg: no ARQ is no error (204). Needs a service
        token.
        """
        self._call('DELETE', ARQ_URL, 'delete',
                   params={'instance': instance_uuid})

    def delete_arqs_by_uuid(self, arq_uuids: list[str],
                            strict: bool = False) -> None:
        """Delete ARQs by UUID (``DELETE ?arqs=u1,u2``); errors are
        logged, or with ``strict`` raised.

        Cyborg answers 404 when any of them is gone already, which is
        expected during cleanup (never raised).
        """
        if not arq_uuids:
            return
        try:
            self._call('DELETE', ARQ_URL, 'delete',
                       params={'arqs': ','.join(arq_uuids)})
        except exception.AcceleratorRequestOpFailed as exc:
            if strict and exc.status_code != 404:
                raise
            level = logging.INFO if exc.status_code == 404 else logging.ERROR
            LOG.log(level, 'Deleting ARQs %s: %s', arq_uuids, exc)
