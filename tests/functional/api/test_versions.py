"""Version discovery, microversion negotiation, routing and error
envelopes of the v2 API, over HTTP."""

import pytest
import requests

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

DESCRIPTION = ('Cyborg is the OpenStack project for lifecycle management '
               'of hardware accelerators, such as GPUs,FPGAs, AI chips, '
               'security accelerators, etc.')
VERSION_HEADERS = ('OpenStack-API-Minimum-Version',
                   'OpenStack-API-Maximum-Version', 'OpenStack-API-Version')


def _get(stack, path, headers=None):
    return requests.get(stack.url + path, headers=headers or {}, timeout=30)


def _assert_version_headers(resp, version):
    assert resp.headers['OpenStack-API-Minimum-Version'] == '2.0'
    assert resp.headers['OpenStack-API-Maximum-Version'] == '2.3'
    assert resp.headers['OpenStack-API-Version'] == 'accelerator ' + version
    assert 'OpenStack-API-Version' in resp.headers['Vary']


@pytest.mark.parametrize('path', ['/', '/.json'])
def test_root_document_needs_no_auth(stack, path):
    resp = _get(stack, path)
    assert resp.status_code == 200
    body = resp.json()
    version = {'id': 'v2', 'status': 'CURRENT', 'min_version': '2.0',
               'max_version': '2.3',
               'links': [{'href': stack.url + '/accelerator/v2',
                          'rel': 'self'}]}
    assert body == {'name': 'OpenStack Cyborg API',
                    'description': DESCRIPTION,
                    'versions': [version], 'default_version': version}
    for name in VERSION_HEADERS:
        assert name not in resp.headers


@pytest.mark.parametrize('path', ['/v2', '/v2/', '/v2.json'])
def test_v2_document_needs_no_auth(stack, path):
    resp = _get(stack, path)
    assert resp.status_code == 200
    assert resp.json() == {
        'id': 'v2.0', 'status': 'CURRENT', 'min_version': '2.0',
        'max_version': '2.3',
        'links': [{'href': stack.url + '/accelerator/v2/', 'rel': 'self'}]}
    _assert_version_headers(resp, '2.0')


@pytest.mark.parametrize('header,expected', [
    ('accelerator 2.1', '2.1'),
    ('2.1', '2.1'),
    ('accelerator 2.3', '2.3'),
    ('2.2', '2.2'),
    ('accelerator latest', '2.3'),
    ('latest', '2.3'),
    ('accelerator 2.0', '2.0'),
])
def test_requested_version_is_echoed(stack, header, expected):
    resp = _get(stack, '/v2/device_profiles',
                dict(cyborg_api.ADMIN, **{'OpenStack-API-Version': header}))
    assert resp.status_code == 200
    assert 'device_profiles' in resp.json()
    _assert_version_headers(resp, expected)


def test_no_header_means_2_0(stack):
    resp = _get(stack, '/v2/device_profiles', cyborg_api.ADMIN)
    assert resp.status_code == 200
    _assert_version_headers(resp, '2.0')


def test_version_changes_behaviour(admin, stack):
    """The parsed version really reaches the handlers: device status
    appears at 2.3, given in either header form."""
    for header in ('accelerator 2.3', '2.3', 'latest'):
        resp = _get(stack, '/v2/devices',
                    dict(cyborg_api.ADMIN, **{'OpenStack-API-Version':
                                              header}))
        assert resp.status_code == 200
        assert all('status' in d for d in resp.json()['devices'])
    resp = _get(stack, '/v2/devices',
                dict(cyborg_api.ADMIN, **{'OpenStack-API-Version': '2.2'}))
    assert all('status' not in d for d in resp.json()['devices'])


@pytest.mark.parametrize('header,message', [
    ('accelerator 2.9',
     'Version 2.9 was requested but the minor version is not supported by '
     'this service. The supported version range is: [2.0, 2.3].'),
    ('2.9',
     'Version 2.9 was requested but the minor version is not supported by '
     'this service. The supported version range is: [2.0, 2.3].'),
    ('accelerator 3.0', 'Mutually exclusive versions requested'),
    ('accelerator 1.0', 'Mutually exclusive versions requested'),
    ('accelerator garbage', 'Invalid value for OpenStack-API-Version header'),
    ('10', 'Invalid value for OpenStack-API-Version header'),
    ('accelerator 2.x', 'Invalid value for OpenStack-API-Version header'),
])
def test_unacceptable_versions(stack, header, message):
    resp = _get(stack, '/v2/device_profiles',
                dict(cyborg_api.ADMIN, **{'OpenStack-API-Version': header}))
    helpers.assert_error(resp, 406, message)
    assert resp.headers['OpenStack-API-Minimum-Version'] == '2.0'
    assert resp.headers['OpenStack-API-Maximum-Version'] == '2.3'


def test_unacceptable_version_on_v2_document(stack):
    resp = _get(stack, '/v2', {'OpenStack-API-Version': 'accelerator 2.9'})
    helpers.assert_error(resp, 406, 'Version 2.9 was requested')


def test_other_service_version_header_is_ignored(stack):
    resp = _get(stack, '/v2/device_profiles',
                dict(cyborg_api.ADMIN,
                     **{'OpenStack-API-Version': 'compute 2.90'}))
    assert resp.status_code == 200
    _assert_version_headers(resp, '2.0')


@pytest.mark.parametrize('collection', [
    'device_profiles', 'accelerator_requests', 'devices', 'deployables',
    'attributes'])
def test_v2_prefix_is_optional(stack, collection):
    with_prefix = _get(stack, '/v2/' + collection, cyborg_api.ADMIN)
    without = _get(stack, '/' + collection, cyborg_api.ADMIN)
    assert with_prefix.status_code == without.status_code == 200
    key = 'arqs' if collection == 'accelerator_requests' else collection
    assert with_prefix.json() == without.json()
    assert isinstance(without.json()[key], list)
    _assert_version_headers(without, '2.0')


@pytest.mark.parametrize('path', [
    '/v2/nothing_here', '/nothing_here', '/v1/accelerators', '/v2/fpgas',
    '/v2/accelerators'])
def test_unknown_path_is_404_in_envelope(stack, path):
    resp = _get(stack, path, cyborg_api.ADMIN)
    helpers.assert_error(resp, 404)
    assert '<html' not in resp.text.lower()


def test_unsupported_method_is_4xx_in_envelope(stack):
    resp = requests.put(stack.url + '/v2/device_profiles', json={},
                        headers=cyborg_api.ADMIN, timeout=30)
    assert resp.status_code in (404, 405)
    helpers.fault(resp)


def test_healthcheck(stack):
    resp = _get(stack, '/healthcheck')
    assert resp.status_code == 200
    assert resp.text.strip() == 'OK'


def test_request_id_header(admin):
    resp = admin.get('/device_profiles')
    assert resp.headers['x-openstack-request-id'].startswith('req-')


@pytest.mark.parametrize('method,path,body', [
    ('HEAD', '/v2/device_profiles/' + helpers.ABSENT_UUID, None),
    ('GET', '/v2/device_profiles/' + helpers.ABSENT_UUID, None),
    ('GET', '/v2/no_such_collection', None)])
def test_errors_carry_the_request_id_and_version_headers(stack, method,
                                                         path, body):
    """An error, rewrapped in the envelope or not (a HEAD's has no body
    to keep), has the headers of any answer: its request id and the
    version ones."""
    resp = requests.request(
        method, stack.url + path, data=body, timeout=30,
        headers=dict(cyborg_api.ADMIN, **{
            'OpenStack-API-Version': 'accelerator 2.2',
            'Content-Type': 'application/json'}))
    assert resp.status_code == 404, resp.text
    assert resp.headers['x-openstack-request-id'].startswith('req-')
    _assert_version_headers(resp, '2.2')


def test_no_identity_headers_means_admin_in_noauth(stack):
    resp = _get(stack, '/v2/devices')
    assert resp.status_code == 200
    assert len(resp.json()['devices']) == 4
