"""The cyborg-lite API under each authentication strategy.

The same identities (see ``conftest.py``) go through the real stack with
``noauth``, ``http_basic`` and ``keystone`` (a real Keystone): anonymous
and bad credentials get 401 while the discovery documents stay public,
projects are isolated, bind/unbind/delete of bound ARQs need the service
role, and admin-only resources refuse members.
"""

import time
import uuid

import pytest
import requests

from tests.fixtures import cyborg_api


def create_arq(stack, profile, user='alice'):
    resp = stack.caller(user).post('/accelerator_requests',
                                   json={'device_profile_name': profile})
    assert resp.status_code == 201, resp.text
    arq = resp.json()['arqs'][0]
    assert arq['project_id'] == stack.mode.project(user)
    return arq


def bind(stack, arq, fpga, user='alice', service=True):
    instance = str(uuid.uuid4())
    patch = cyborg_api.bind_patch([arq['uuid']], stack.aio.hostnames[0],
                                  fpga['rp_uuid'], instance)
    headers = {}
    if service and stack.mode.name == 'http_basic':
        # Nova acts as its own (admin) user here, not with the user's
        # token, so it keeps the ARQ in the user's project explicitly.
        patch[arq['uuid']].append({'op': 'add', 'path': '/project_id',
                                   'value': arq['project_id']})
        headers['OpenStack-API-Version'] = 'accelerator 2.1'
    return instance, stack.caller(user, service).patch(
        '/accelerator_requests', json=patch, headers=headers)


def wait_bound(stack, arq_uuid):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        resp = stack.caller('alice').get('/accelerator_requests/' + arq_uuid)
        assert resp.status_code == 200, resp.text
        state = resp.json()['state']
        if state != 'BindStarted':
            return state
        time.sleep(0.05)
    raise AssertionError('bind never finished')


@pytest.mark.parametrize('path', ['/', '/v2', '/v2/'])
def test_discovery_is_public(stack, path):
    resp = requests.get(stack.url + path, timeout=30)
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize('path', ['/accelerator_requests', '/device_profiles',
                                  '/devices'])
def test_no_credentials_is_401(stack, path):
    if stack.mode.name == 'noauth':
        pytest.skip('noauth has no credentials: an anonymous request gets '
                    'the [api] noauth_default_* identity by design')
    resp = requests.get(stack.url + '/v2' + path, timeout=30)
    assert resp.status_code == 401, resp.text
    assert 'error_message' in resp.json()
    assert 'WWW-Authenticate' in resp.headers
    # As on every answer: its request id and the version headers.
    assert resp.headers['x-openstack-request-id'].startswith('req-')
    assert resp.headers['OpenStack-API-Version'] == 'accelerator 2.0'
    bad = requests.get(stack.url + '/v2' + path, timeout=30,
                       headers=stack.mode.bad_headers())
    assert bad.status_code == 401, bad.text


def test_identity_headers_from_the_client_are_ignored(stack, profile):
    if stack.mode.name == 'noauth':
        pytest.skip('noauth trusts the identity headers by design')
    # headers() adds X-Roles: admin to alice's credentials.
    resp = stack.caller('alice').post('/device_profiles', json=[
        {'name': 'nope', 'groups': [{'resources:FPGA': '1'}]}])
    assert resp.status_code == 403, resp.text


def test_other_projects_arqs_are_invisible(stack, profile):
    arq = create_arq(stack, profile)
    bob = stack.caller('bob')
    assert bob.get('/accelerator_requests/' + arq['uuid']).status_code == 404
    listed = bob.get('/accelerator_requests').json()['arqs']
    assert arq['uuid'] not in [a['uuid'] for a in listed]
    resp = bob.delete('/accelerator_requests', params={'arqs': arq['uuid']})
    assert resp.status_code == 404, resp.text
    alice = stack.caller('alice')
    assert alice.get('/accelerator_requests/' +
                     arq['uuid']).status_code == 200
    resp = alice.delete('/accelerator_requests',
                        params={'arqs': arq['uuid']})
    assert resp.status_code == 204, resp.text


def test_bind_unbind_and_bound_deletes_need_the_service_role(stack, profile,
                                                             fpga):
    arq = create_arq(stack, profile)
    _, resp = bind(stack, arq, fpga, service=False)
    assert resp.status_code == 403, resp.text
    instance, resp = bind(stack, arq, fpga, service=True)
    assert resp.status_code == 202, resp.text
    assert wait_bound(stack, arq['uuid']) == 'Bound'
    alice = stack.caller('alice')
    unbind = cyborg_api.unbind_patch([arq['uuid']])
    assert alice.patch('/accelerator_requests',
                       json=unbind).status_code == 403
    resp = alice.delete('/accelerator_requests',
                        params={'instance': instance})
    assert resp.status_code == 403, resp.text
    resp = alice.delete('/accelerator_requests',
                        params={'arqs': arq['uuid']})
    assert resp.status_code == 403, resp.text
    service = stack.caller('alice', service=True)
    resp = service.delete('/accelerator_requests',
                          params={'instance': instance})
    assert resp.status_code == 204, resp.text
    assert alice.get('/accelerator_requests/' +
                     arq['uuid']).status_code == 404


@pytest.mark.parametrize('through_nova', [False, True])
def test_members_cannot_manage_devices(stack, fpga, through_nova):
    """A member cannot, nor can a member's token that comes with Nova's
    service token: the service role lets Nova bind, not manage."""
    if through_nova and stack.mode.name == 'http_basic':
        pytest.skip('http_basic has one credential per request: a '
                    'service acts as its own user')
    caller = stack.caller('alice', service=through_nova)
    resp = caller.post('/device_profiles', json=[
        {'name': 'nope', 'groups': [{'resources:FPGA': '1'}]}])
    assert resp.status_code == 403, resp.text
    resp = caller.patch('/deployables/%s/program' % fpga['uuid'], json=[
        {'path': '/bitstream_id', 'op': 'replace',
         'value': str(uuid.uuid4())}])
    assert resp.status_code == 403, resp.text
    assert caller.get('/devices').status_code == 403
    assert caller.get('/deployables').status_code == 403


def test_admin_manages_devices(stack):
    """What a member may not do, the admin may."""
    admin = stack.caller('admin')
    devices = admin.get('/devices')
    assert devices.status_code == 200, devices.text
    assert devices.json()['devices']
    assert admin.get('/deployables').status_code == 200
    name = 'admin-%s' % uuid.uuid4().hex[:8]
    resp = admin.post('/device_profiles', json=[
        {'name': name, 'groups': [{'resources:FPGA': '1'}]}])
    assert resp.status_code == 201, resp.text
    assert admin.delete('/device_profiles/' + name).status_code == 204
