"""Flavors as Nova's API keeps them: stored in nova_shim's database,
made by admins (``os-flavor-manage``), with extra specs
(``os-flavor-extra-specs``) whose ``accel:device_profile`` makes a
server accelerated; ``[compute] flavors`` seeds them.

The whole chain (Placement, the compute API, cyborg-lite) in one
process, over HTTP; the compute API in noauth2 (identity headers).
"""

import pytest

from nova_shim.compute import flavors as flavor_lib
from tests.functional.nova_shim.test_lifecycle_chain import ADMIN_HEADERS
from tests.functional.nova_shim.test_lifecycle_chain import Chain
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS

DP = 'flavor-fpga'
V = {'OpenStack-API-Version': 'compute 2.75'}


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('flavors')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    yield chain
    chain.stop()


def call(chain, method, path, body=None, admin=False, version=V):
    headers = dict(ADMIN_HEADERS if admin else HEADERS, **(version or {}))
    return chain.api(method, path, json=body, headers=headers)


def create(chain, name, **extra):
    body = {'flavor': dict({'name': name, 'ram': 256, 'vcpus': 1,
                            'disk': 1}, **extra)}
    resp = call(chain, 'POST', '/flavors', body, admin=True)
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']


def test_configured_flavors_are_seeded(chain):
    listed = call(chain, 'GET', '/flavors').json()['flavors']
    names = {f['name']: f for f in listed}
    assert {'m1.tiny', 'm1.small'} <= set(names)
    tiny = names['m1.tiny']
    assert tiny['id'] == flavor_lib.seed_id('m1.tiny')
    assert tiny['links'][0]['href'].endswith('/v2.1/flavors/' + tiny['id'])
    shown = call(chain, 'GET', '/flavors/' + tiny['id']).json()['flavor']
    assert (shown['vcpus'], shown['ram'], shown['disk']) == (1, 512, 1)
    assert shown['os-flavor-access:is_public'] is True


def test_admins_create_and_delete_flavors(chain):
    made = create(chain, 'f-made', id='made-1', swap=0,
                  **{'OS-FLV-EXT-DATA:ephemeral': 2})
    assert made['id'] == 'made-1'
    assert made['OS-FLV-EXT-DATA:ephemeral'] == 2 and made['swap'] == 0
    assert made['extra_specs'] == {}
    auto = create(chain, 'f-auto', id=None)
    assert len(auto['id']) == 36
    # Another flavor of a taken name or id is a 409; a member may not.
    for body in ({'name': 'f-made', 'ram': 1, 'vcpus': 1, 'disk': 0},
                 {'name': 'f-other', 'id': 'made-1', 'ram': 1, 'vcpus': 1,
                  'disk': 0}):
        resp = call(chain, 'POST', '/flavors', {'flavor': body}, admin=True)
        assert resp.status_code == 409, resp.text
        assert 'already exists' in resp.json()['conflictingRequest'][
            'message']
    resp = call(chain, 'POST', '/flavors', {'flavor': {
        'name': 'f-member', 'ram': 1, 'vcpus': 1, 'disk': 0}})
    assert resp.status_code == 403, resp.text
    assert call(chain, 'DELETE', '/flavors/made-1').status_code == 403
    assert call(chain, 'DELETE', '/flavors/made-1',
                admin=True).status_code == 202
    assert call(chain, 'GET', '/flavors/made-1').status_code == 404
    assert call(chain, 'DELETE', '/flavors/made-1',
                admin=True).status_code == 404


@pytest.mark.parametrize('flavor', [
    {'name': ' lead', 'ram': 1, 'vcpus': 1, 'disk': 0},
    {'name': 'x', 'ram': 0, 'vcpus': 1, 'disk': 0},
    {'name': 'x', 'ram': 1, 'vcpus': 1, 'disk': -1},
    {'name': 'x', 'ram': 1, 'vcpus': 1},
    {'name': 'x', 'ram': 1, 'vcpus': 1, 'disk': 0, 'id': 'a/b'},
    {'name': 'x', 'ram': 1, 'vcpus': 1, 'disk': 0, 'rxtx_factor': 0},
    {'name': 'x', 'ram': 1, 'vcpus': 1, 'disk': 0, 'bogus': 1},
])
def test_a_bad_flavor_is_400(chain, flavor):
    resp = call(chain, 'POST', '/flavors', {'flavor': flavor}, admin=True)
    assert resp.status_code == 400, resp.text
    assert 'badRequest' in resp.json()


def test_microversions_shape_a_flavor(chain):
    flavor = create(chain, 'f-versions', description='small')
    path = '/flavors/' + flavor['id']
    old = call(chain, 'GET', path, version=None).json()['flavor']
    assert 'description' not in old and 'extra_specs' not in old
    assert old['swap'] == ''
    v255 = call(chain, 'GET', path, version={
        'OpenStack-API-Version': 'compute 2.55'}).json()['flavor']
    assert v255['description'] == 'small'
    resp = call(chain, 'PUT', path, {'flavor': {'description': 'now'}},
                admin=True, version={'OpenStack-API-Version': 'compute 2.55'})
    assert resp.status_code == 200, resp.text
    assert resp.json()['flavor']['description'] == 'now'
    assert call(chain, 'PUT', path, {'flavor': {'description': 'x'}},
                admin=True, version=None).status_code == 404
    new = call(chain, 'GET', path).json()['flavor']
    assert new['swap'] == 0 and new['extra_specs'] == {}
    summary = call(chain, 'GET', '/flavors').json()['flavors']
    assert {'id', 'name', 'links', 'description'} == set(summary[0])


def test_extra_specs(chain):
    flavor = create(chain, 'f-specs')
    base = '/flavors/%s/os-extra_specs' % flavor['id']
    resp = call(chain, 'POST', base, {'extra_specs': {
        'accel:device_profile': DP, 'hw:cpu_policy': 'dedicated',
        'trait:CUSTOM_X': 'required', 'quota:n': 3}}, admin=True)
    assert resp.status_code == 200, resp.text
    assert resp.json()['extra_specs']['quota:n'] == '3'
    # A member reads them, and may not change them.
    assert call(chain, 'GET', base).json()['extra_specs'][
        'accel:device_profile'] == DP
    assert call(chain, 'GET', base + '/hw:cpu_policy').json() == {
        'hw:cpu_policy': 'dedicated'}
    assert call(chain, 'POST', base, {'extra_specs': {'a': 'b'}}
                ).status_code == 403
    assert call(chain, 'DELETE', base + '/hw:cpu_policy').status_code == 403
    resp = call(chain, 'PUT', base + '/hw:cpu_policy',
                {'hw:cpu_policy': 'shared'}, admin=True)
    assert resp.json() == {'hw:cpu_policy': 'shared'}
    for body in ({'other': 'x'}, {'hw:cpu_policy': 'a', 'b': 'c'}):
        assert call(chain, 'PUT', base + '/hw:cpu_policy', body,
                    admin=True).status_code == 400
    assert call(chain, 'POST', base, {'extra_specs': {'bad/key': 'v'}},
                admin=True).status_code == 400
    assert call(chain, 'DELETE', base + '/hw:cpu_policy',
                admin=True).status_code == 202
    assert call(chain, 'GET', base + '/hw:cpu_policy').status_code == 404
    assert call(chain, 'DELETE', base + '/hw:cpu_policy',
                admin=True).status_code == 404
    detail = call(chain, 'GET', '/flavors/detail').json()['flavors']
    [shown] = [f for f in detail if f['id'] == flavor['id']]
    assert shown['extra_specs'] == {'accel:device_profile': DP,
                                    'trait:CUSTOM_X': 'required',
                                    'quota:n': '3'}


def test_a_server_of_an_accelerated_flavor_gets_its_accelerators(chain):
    """``accel:device_profile`` in a stored flavor's extra specs, as in
    Nova: the server's ARQ is bound, and the server keeps what it had
    of its flavor after the flavor is deleted."""
    flavor = create(chain, 'f-fpga', id='fpga-1')
    resp = call(chain, 'POST', '/flavors/fpga-1/os-extra_specs',
                {'extra_specs': {'accel:device_profile': DP}}, admin=True)
    assert resp.status_code == 200, resp.text
    for ref in ('fpga-1', chain.service.url + '/v2.1/flavors/fpga-1'):
        resp = call(chain, 'POST', '/servers', {'server': {
            'name': 'acc', 'flavorRef': ref, 'imageRef': 'any'}})
        assert resp.status_code == 202, resp.text
        server = resp.json()['server']['id']
        shown = chain.wait(server, 'ACTIVE')
        assert [a['state'] for a in shown['accelerator_requests']] == [
            'Bound']
        assert shown['flavor'] == {'id': 'fpga-1', 'links': [{
            'rel': 'bookmark',
            'href': chain.service.url + '/flavors/fpga-1'}]}
        assert call(chain, 'DELETE', '/servers/' + server).status_code == 204
    assert call(chain, 'DELETE', '/flavors/' + flavor['id'],
                admin=True).status_code == 202
    resp = call(chain, 'POST', '/servers', {'server': {
        'name': 'gone', 'flavorRef': 'fpga-1'}})
    assert resp.status_code == 400, resp.text
    assert 'could not be found' in resp.json()['badRequest']['message']
