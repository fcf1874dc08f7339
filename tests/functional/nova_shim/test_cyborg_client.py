"""nova_shim's Cyborg client over HTTP, against a scripted Cyborg peer.

See scripted_cyborg.py: the peer answers with the contract's shapes and
records what the client sent.
"""

import logging
import socket

from keystoneauth1 import loading as ks_loading
import pytest

from nova_shim.accelerator import cyborg
from nova_shim import conf as shim_conf
from nova_shim.context import RequestContext
from nova_shim import exception
from tests.functional.nova_shim.scripted_cyborg import error_body
from tests.functional.nova_shim.scripted_cyborg import ScriptedCyborg

ARQ_PATH = '/v2/accelerator_requests'
INSTANCE = 'd1e3ff56-0ab4-4b1c-8a55-4b8f7e3a0c11'
RP = '03631f82-20a9-3f67-a29d-dc1abe4042bf'
CTX = RequestContext(user_id='u1', project_id='p1', roles=['member'],
                     auth_token='user-token', service_token='svc-token')
DP = {'uuid': '5518a925-1c2c-49a2-a8bf-0927d9456f3e', 'name': 'fpga-dp1',
      'description': None, 'created_at': None, 'updated_at': None,
      'links': [],
      'groups': [{'resources:FPGA': '1',
                  'trait:CUSTOM_FPGA_INTEL': 'required'},
                 {'resources:CUSTOM_QAT': '1'}]}


def arq(uuid, group=0, state='Initial'):
    bound = state == 'Bound'
    return {'uuid': uuid, 'state': state, 'device_profile_name': 'fpga-dp1',
            'device_profile_group_id': group,
            'hostname': 'compute-1' if bound else None,
            'device_rp_uuid': RP if bound else None,
            'instance_uuid': INSTANCE if bound else None,
            'project_id': 'p1',
            'attach_handle_type': 'PCI' if bound else '',
            'attach_handle_uuid': 'c5e65f39' if bound else None,
            'attach_handle_info': {'bus': '0c', 'device': '00',
                                   'domain': '0000', 'function': '0'}
            if bound else {},
            'created_at': '2026-01-01T00:00:00+00:00', 'updated_at': None,
            'links': []}


@pytest.fixture
def peer():
    server = ScriptedCyborg().start()
    yield server
    server.stop()


def make_conf(endpoint, auth_type='none', service_token=True):
    overrides = {('cyborg', 'endpoint_override'): endpoint,
                 ('service_user', 'send_service_user_token'): service_token}
    if auth_type:
        overrides[('cyborg', 'auth_type')] = auth_type
    return shim_conf.build_conf(overrides=overrides)


@pytest.fixture
def client(peer):
    return cyborg.get_client(CTX, make_conf(peer.endpoint))


def test_device_profile_request_groups(peer):
    peer.routes[('GET', '/v2/device_profiles')] = (
        200, {'device_profiles': [DP]})
    groups = cyborg.get_device_profile_request_groups(
        CTX, 'fpga-dp1', conf=make_conf(peer.endpoint))
    assert [(g.requester_id, g.resources, g.required_traits)
            for g in groups] == [
        ('device_profile_0', {'FPGA': 1}, {'CUSTOM_FPGA_INTEL'}),
        ('device_profile_1', {'CUSTOM_QAT': 1}, set())]
    (sent,) = peer.requests
    assert sent.query == {'name': ['fpga-dp1']}
    assert sent.headers['X-Project-Id'] == 'p1'
    assert sent.headers['X-User-Id'] == 'u1'
    assert sent.headers['X-Roles'] == 'member'
    assert sent.headers['X-Service-Roles'] == 'service'
    assert sent.headers['X-Service-Token'] == 'svc-token'
    assert sent.headers['X-OpenStack-Request-ID'] == CTX.request_id
    assert 'OpenStack-API-Version' not in sent.headers


@pytest.mark.parametrize('profiles', [[], [DP, dict(DP, name='other')]])
def test_device_profile_must_match_exactly_one(peer, client, profiles):
    peer.routes[('GET', '/v2/device_profiles')] = (
        200, {'device_profiles': profiles})
    with pytest.raises(exception.DeviceProfileError,
                       match='Expected 1 device profile, got %d'
                       % len(profiles)):
        client.get_device_profile_groups('fpga-dp1')


def test_device_profile_error_says_what_cyborg_said(peer, client):
    peer.routes[('GET', '/v2/device_profiles')] = (403, error_body(
        403, 'Access was denied to the following resource: '
             'cyborg:device_profile:get_all'))
    with pytest.raises(exception.DeviceProfileError) as info:
        client.get_device_profile_groups('fpga-dp1')
    assert info.value.status_code == 403
    assert 'Cyborg returned 403: Access was denied' in str(info.value)


def test_create_arqs_and_match_providers(peer, client):
    peer.routes[('POST', ARQ_PATH)] = (201, {'arqs': [
        arq('a0', 0), arq('a1', 1), arq('a2', 1)]})
    arqs = client.create_arqs_and_match_resource_providers(
        'fpga-dp1', {'device_profile_0': ['rp0'],
                     'device_profile_1': ['rp1']})
    assert [(a['uuid'], a['device_rp_uuid']) for a in arqs] == [
        ('a0', 'rp0'), ('a1', 'rp1'), ('a2', 'rp1')]
    assert peer.requests[0].body == {'device_profile_name': 'fpga-dp1'}


def test_unmatched_group_deletes_the_new_arqs(peer, client):
    peer.routes[('POST', ARQ_PATH)] = (201, {'arqs': [arq('a0'),
                                                       arq('a1', 1)]})
    peer.routes[('DELETE', ARQ_PATH)] = (204, None)
    with pytest.raises(exception.AcceleratorRequestOpFailed,
                       match='device_profile_1'):
        client.create_arqs_and_match_resource_providers(
            'fpga-dp1', {'device_profile_0': ['rp0']})
    assert peer.requests[-1].query == {'arqs': ['a0,a1']}


def test_create_arqs_unknown_profile_is_a_404(peer, client):
    peer.routes[('POST', ARQ_PATH)] = (404, error_body(
        404, 'Device Profile not found with name=nope'))
    with pytest.raises(exception.AcceleratorRequestOpFailed) as info:
        client.create_arqs('nope')
    assert info.value.status_code == 404
    assert str(info.value) == ('Failed to create accelerator requests: '
                               'Cyborg returned 404: Device Profile not '
                               'found with name=nope')


def test_bind_arqs_sends_patch_ops(peer, client):
    peer.routes[('PATCH', ARQ_PATH)] = (202, None)
    client.bind_arqs({'a0': {'hostname': 'compute-1', 'device_rp_uuid': RP,
                             'instance_uuid': INSTANCE}})
    (sent,) = peer.requests
    assert sent.body == {'a0': [
        {'path': '/hostname', 'op': 'add', 'value': 'compute-1'},
        {'path': '/device_rp_uuid', 'op': 'add', 'value': RP},
        {'path': '/instance_uuid', 'op': 'add', 'value': INSTANCE}]}


def test_bind_failure_carries_arqs_and_status(peer, client):
    peer.routes[('PATCH', ARQ_PATH)] = (403, error_body(
        403, 'This operation requires a service token.'))
    with pytest.raises(exception.AcceleratorRequestBindingFailed) as info:
        client.bind_arqs({'a0': {'hostname': 'h'}, 'a1': {'hostname': 'h'}})
    assert info.value.arqs == ['a0', 'a1']
    assert info.value.status_code == 403
    assert 'requires a service token' in str(info.value)
    assert 'Binding failed for ARQ UUIDs: a0,a1' in str(info.value)


def test_get_arqs_for_instance(peer, client):
    peer.routes[('GET', ARQ_PATH)] = (200, {'arqs': [
        arq('a0', state='Bound'), arq('a1', state='BindStarted'),
        arq('a2', state='BindFailed')]})
    assert [a['uuid'] for a in client.get_arqs_for_instance(INSTANCE)] == \
        ['a0', 'a1', 'a2']
    assert [a['uuid'] for a in client.get_arqs_for_instance(
        INSTANCE, only_resolved=True)] == ['a0', 'a2']
    assert client.get_arq_uuids_for_instance(INSTANCE) == ['a0', 'a1', 'a2']
    assert peer.requests[0].query == {'instance': [INSTANCE]}


def test_no_arqs_for_instance_is_an_error(peer, client):
    peer.routes[('GET', ARQ_PATH)] = (200, {'arqs': []})
    with pytest.raises(exception.AcceleratorRequestOpFailed,
                       match='no accelerator requests for instance'):
        client.get_arqs_for_instance(INSTANCE)


def test_get_arq_by_uuid_tells_404_from_500(peer, client):
    peer.routes[('GET', ARQ_PATH + '/a0')] = (200, arq('a0'))
    peer.routes[('GET', ARQ_PATH + '/a1')] = (500, error_body(
        500, 'Remote error: DBError'))
    assert client.get_arq_by_uuid('a0')['uuid'] == 'a0'
    with pytest.raises(exception.AcceleratorRequestOpFailed) as gone:
        client.get_arq_by_uuid('a9')
    with pytest.raises(exception.AcceleratorRequestOpFailed) as broken:
        client.get_arq_by_uuid('a1')
    assert (gone.value.status_code, broken.value.status_code) == (404, 500)
    assert 'DBError' in str(broken.value)


def test_delete_arqs_for_instance(peer, client):
    peer.routes[('DELETE', ARQ_PATH)] = (204, None)
    client.delete_arqs_for_instance(INSTANCE)
    assert peer.requests[0].query == {'instance': [INSTANCE]}
    peer.routes[('DELETE', ARQ_PATH)] = (403, error_body(403, 'denied'))
    with pytest.raises(exception.AcceleratorRequestOpFailed) as info:
        client.delete_arqs_for_instance(INSTANCE)
    assert info.value.status_code == 403


def test_delete_arqs_by_uuid_only_logs(peer, client, caplog):
    peer.routes[('DELETE', ARQ_PATH)] = (404, error_body(
        404, 'ExtArq not found with uuid=a1'))
    with caplog.at_level(logging.INFO, logger=cyborg.__name__):
        client.delete_arqs_by_uuid(['a0', 'a1'])
    assert peer.requests[0].query == {'arqs': ['a0,a1']}
    assert 'ExtArq not found' in caplog.text


def test_unreachable_cyborg_has_no_status():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    client = cyborg.get_client(
        CTX, make_conf('http://127.0.0.1:%d/v2' % port))
    with pytest.raises(exception.AcceleratorRequestOpFailed,
                       match='Could not communicate with Cyborg') as info:
        client.get_arq_by_uuid('a0')
    assert info.value.status_code is None


def test_user_token_mode(peer):
    peer.routes[('GET', ARQ_PATH + '/a0')] = (200, arq('a0'))
    client = cyborg.get_client(CTX, make_conf(peer.endpoint, auth_type=None))
    client.get_arq_by_uuid('a0')
    headers = peer.requests[0].headers
    assert headers['X-Auth-Token'] == 'user-token'
    assert headers['X-Service-Token'] == 'svc-token'
    assert 'X-Project-Id' not in headers


def test_http_basic_mode(peer):
    peer.routes[('GET', ARQ_PATH + '/a0')] = (200, arq('a0'))
    conf = make_conf(peer.endpoint, auth_type='http_basic',
                     service_token=False)
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('http_basic'),
                       group='cyborg')
    conf.set_override('username', 'nova', group='cyborg')
    conf.set_override('password', 'secret', group='cyborg')
    cyborg.get_client(CTX, conf).get_arq_by_uuid('a0')
    headers = peer.requests[0].headers
    assert headers['Authorization'] == 'Basic bm92YTpzZWNyZXQ='
    assert 'X-Service-Token' not in headers


def test_user_token_mode_finds_cyborg_in_the_catalog(peer):
    peer.routes[('GET', ARQ_PATH + '/a0')] = (200, arq('a0'))
    catalog = [{'type': 'accelerator', 'name': 'cyborg', 'endpoints': [
        {'interface': 'public', 'region_id': 'RegionOne',
         'url': peer.endpoint}]}]
    ctx = RequestContext(user_id='u1', project_id='p1', roles=['member'],
                         auth_token='user-token', service_catalog=catalog)
    conf = make_conf(None, auth_type=None, service_token=False)
    cyborg.get_client(ctx, conf).get_arq_by_uuid('a0')
    assert peer.requests[0].headers['X-Auth-Token'] == 'user-token'
