"""/v2/devices, /v2/deployables and /v2/attributes over HTTP: the
inventory the fake agents of two hosts reported."""

import json

import pytest

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

DEVICE_FIELDS = {'uuid', 'type', 'vendor', 'model', 'std_board_info',
                 'vendor_board_info', 'hostname', 'created_at', 'updated_at',
                 'links'}
DEPLOYABLE_FIELDS = {'uuid', 'name', 'parent_id', 'root_id',
                     'num_accelerators', 'device_id', 'rp_uuid',
                     'driver_name', 'bitstream_id', 'attributes_list',
                     'created_at', 'updated_at', 'links'}


@pytest.fixture
def v23(stack):
    return stack.client(cyborg_api.ADMIN, version='2.3')


def _listed(collection, client, query=''):
    """The members of ``GET /<collection><query>``, which must be 200."""
    resp = client.get('/' + collection + query)
    assert resp.status_code == 200, resp.text
    return resp.json()[collection]


def _devices(client, query=''):
    return _listed('devices', client, query)


# --- devices ----------------------------------------------------------

def test_devices_list(admin, stack):
    devices = _devices(admin)
    assert len(devices) == 4
    assert sorted((d['hostname'], d['type']) for d in devices) == sorted(
        (h, t) for h in stack.aio.hostnames for t in ('FPGA', 'GPU'))
    for dev in devices:
        assert set(dev) == DEVICE_FIELDS
        assert dev['vendor'] == '0xABCD'
        assert isinstance(json.loads(dev['std_board_info']), dict)
        assert dev['links'] == [{
            'href': '%s/accelerator/v2/devices/%s' % (stack.url,
                                                      dev['uuid']),
            'rel': 'self'}]


def test_devices_filters(admin, stack):
    fpgas = _devices(admin, '?type=FPGA')
    assert len(fpgas) == 2 and {d['type'] for d in fpgas} == {'FPGA'}
    host = stack.aio.hostnames[1]
    on_host = _devices(admin, '?hostname=' + host)
    assert len(on_host) == 2 and {d['hostname'] for d in on_host} == {host}
    both = _devices(admin, '?type=GPU&hostname=' + host)
    assert [(d['type'], d['hostname']) for d in both] == [('GPU', host)]
    assert len(_devices(admin, '?vendor=0xABCD')) == 4
    assert _devices(admin, '?vendor=10de') == []
    assert _devices(admin, '?type=QAT') == []
    assert _devices(admin, '?hostname=nowhere') == []
    # An empty value is no filter, as upstream's.
    for empty in ('?type=', '?vendor=', '?hostname='):
        assert len(_devices(admin, empty)) == 4


def test_device_show(admin):
    dev = _devices(admin, '?type=GPU')[0]
    resp = admin.get('/devices/' + dev['uuid'])
    assert resp.status_code == 200
    assert resp.json() == dev
    # A UUID in another form finds the same device.
    assert admin.get('/devices/' + dev['uuid'].upper()).json() == dev


@pytest.mark.parametrize('ident', ['not-a-uuid', helpers.ABSENT_UUID])
def test_device_show_unknown_is_404(admin, ident):
    helpers.assert_error(admin.get('/devices/' + ident), 404, ident)


def test_device_status_only_at_2_3(admin, v23, stack):
    for version in (None, '2.2'):
        client = stack.client(cyborg_api.ADMIN, version=version)
        for dev in _devices(client):
            assert 'status' not in dev
            assert 'status' not in client.get(
                '/devices/' + dev['uuid']).json()
    devices = _devices(v23)
    assert {d['status'] for d in devices} == {'enabled'}
    assert set(devices[0]) == DEVICE_FIELDS | {'status'}
    assert v23.get('/devices/' + devices[0]['uuid']).json()[
        'status'] == 'enabled'


@pytest.mark.parametrize('accept', helpers.ACCEPTS)
def test_device_disable_and_enable(admin, v23, stack, accept):
    dev = _devices(admin, '?type=FPGA&hostname=' + stack.aio.hostnames[1])[0]
    try:
        resp = admin.post('/devices/%s/disable' % dev['uuid'],
                          headers=accept)
        helpers.assert_no_content(resp, 200)
        assert v23.get('/devices/' + dev['uuid']).json()[
            'status'] == 'maintaining'
        others = [d for d in _devices(v23) if d['uuid'] != dev['uuid']]
        assert {d['status'] for d in others} == {'enabled'}
        helpers.assert_no_content(
            admin.post('/devices/%s/disable' % dev['uuid']), 200)
    finally:
        resp = admin.post('/devices/%s/enable' % dev['uuid'], headers=accept)
    helpers.assert_no_content(resp, 200)
    assert v23.get('/devices/' + dev['uuid']).json()['status'] == 'enabled'


def test_device_without_a_resource_class_is_404_and_unchanged(admin, v23):
    """A deployable whose rc attribute was deleted has no inventory whose
    reserved amount could follow the device's status: 404, as upstream,
    and the status stays as it was (upstream sets it first)."""
    rcs = _attributes(admin, '?key=rc')
    fpga_rcs = [a for a in rcs if a['value'] == 'FPGA']
    for rc in fpga_rcs:
        helpers.assert_no_content(admin.delete('/attributes/' + rc['uuid']))
    try:
        devices = _devices(admin, '?type=FPGA')
        assert len(devices) == len(fpga_rcs) == 2
        for dev in devices:
            for action in ('disable', 'enable'):
                helpers.assert_error(admin.post('/devices/%s/%s' % (
                    dev['uuid'], action)), 404, 'no rc attribute')
                assert v23.get('/devices/' + dev['uuid']).json()[
                    'status'] == 'enabled'
    finally:
        for rc in fpga_rcs:
            assert admin.post('/attributes', json={
                'deployable_id': rc['deployable_id'], 'key': 'rc',
                'value': rc['value']}).status_code == 201


@pytest.mark.parametrize('action', ['enable', 'disable'])
def test_device_enable_unknown_is_404(admin, action):
    uuid = helpers.new_uuid()
    helpers.assert_error(admin.post('/devices/%s/%s' % (uuid, action)), 404,
                         uuid)


# --- deployables ------------------------------------------------------

def test_deployables_list_and_show(admin, stack):
    resp = admin.get('/deployables')
    assert resp.status_code == 200
    deps = resp.json()['deployables']
    assert len(deps) == 4
    by_rc = {}
    for dep in deps:
        assert set(dep) == DEPLOYABLE_FIELDS
        assert isinstance(dep['attributes_list'], str)
        attrs = json.loads(dep['attributes_list'])
        assert all(isinstance(a, dict) and len(a) == 1 for a in attrs)
        merged = {k: v for a in attrs for k, v in a.items()}
        by_rc.setdefault(merged['rc'], []).append(dep)
        assert dep['links'] == [
            {'href': '%s/accelerator/v2/deployables/%s' % (stack.url,
                                                           dep['uuid']),
             'rel': 'self'},
            {'href': '%s/accelerator/deployables/%s' % (stack.url,
                                                        dep['uuid']),
             'rel': 'bookmark'}]
        assert dep['parent_id'] is None and dep['root_id'] is None
        assert dep['driver_name'] == 'fake'
        shown = admin.get('/deployables/' + dep['uuid'])
        assert shown.status_code == 200
        assert shown.json() == dep
    assert sorted(by_rc) == ['FPGA', 'PGPU']
    assert {d['num_accelerators'] for d in by_rc['FPGA']} == {16}
    fpga_attrs = json.loads(by_rc['FPGA'][0]['attributes_list'])
    assert {'rc': 'FPGA'} in fpga_attrs
    assert 'CUSTOM_FAKE_DEVICE' in [v for a in fpga_attrs
                                    for v in a.values()]
    gpu_attrs = json.loads(by_rc['PGPU'][0]['attributes_list'])
    assert 'CUSTOM_FAKE_GPU' in [v for a in gpu_attrs for v in a.values()]


def test_deployables_filter_by_name(admin):
    dep = admin.get('/deployables').json()['deployables'][2]
    for query in ('?filters.field=name&filters.value=%s',
                  '?filters[0].field=name&filters[0].value=%s'):
        resp = admin.get('/deployables' + query % dep['name'])
        assert resp.status_code == 200
        assert resp.json() == {'deployables': [dep]}
    resp = admin.get('/deployables?filters.field=name&filters.value=none')
    assert resp.json() == {'deployables': []}


@pytest.mark.parametrize('query', ['?filters.field=color&filters.value=x',
                                   '?filters.field=name'])
def test_deployables_bad_filter_is_400(admin, query):
    helpers.assert_error(admin.get('/deployables' + query), 400, 'filter')


def test_deployable_bad_uuid_is_400(admin):
    helpers.assert_error(admin.get('/deployables/not-a-uuid'), 400,
                         'must be a UUID')


def test_deployable_unknown_is_404(admin):
    uuid = helpers.new_uuid()
    helpers.assert_error(admin.get('/deployables/' + uuid), 404, uuid)


# --- attributes -------------------------------------------------------

def _attributes(client, query=''):
    return _listed('attributes', client, query)


def test_attributes_list_filters_and_show(admin, stack):
    attrs = _attributes(admin)
    assert len(attrs) >= 8
    assert {a['key'] for a in attrs} >= {'rc', 'trait0'}
    rcs = _attributes(admin, '?key=rc')
    assert sorted(a['value'] for a in rcs) == ['FPGA', 'FPGA', 'PGPU', 'PGPU']
    dep_id = rcs[0]['deployable_id']
    of_one = _attributes(admin, '?deployable_id=%d' % dep_id)
    assert {a['deployable_id'] for a in of_one} == {dep_id}
    assert {a['key'] for a in of_one} >= {'rc', 'trait0'}
    both = _attributes(admin, '?deployable_id=%d&key=rc' % dep_id)
    assert both == [rcs[0]]
    assert _attributes(admin, '?key=nothing') == []
    assert len(_attributes(admin, '?key=')) == len(attrs)
    assert _attributes(admin, '?deployable_id=99999') == []
    attr = rcs[0]
    assert set(attr) == {'uuid', 'deployable_id', 'key', 'value',
                         'created_at', 'updated_at', 'links'}
    assert attr['links'] == [{
        'href': '%s/accelerator/v2/attributes/%s' % (stack.url,
                                                     attr['uuid']),
        'rel': 'self'}]
    resp = admin.get('/attributes/' + attr['uuid'])
    assert resp.status_code == 200
    assert resp.json() == attr
    assert admin.get('/attributes/' + attr['uuid'].upper()).json() == attr


def test_attributes_bad_deployable_id_is_400(admin):
    helpers.assert_error(admin.get('/attributes?deployable_id=one'), 400,
                         'deployable_id')


@pytest.mark.parametrize('accept', helpers.ACCEPTS)
def test_attribute_create_and_delete(admin, accept):
    dep_id = _attributes(admin, '?key=rc')[0]['deployable_id']
    resp = admin.post('/attributes', json={'deployable_id': dep_id,
                                           'key': 'note', 'value': 'hello'})
    assert resp.status_code == 201
    attr = resp.json()
    assert 'attributes' not in attr
    assert (attr['deployable_id'], attr['key'], attr['value']) == (
        dep_id, 'note', 'hello')
    assert admin.get('/attributes/' + attr['uuid']).json() == attr
    assert attr in _attributes(admin, '?key=note')
    helpers.assert_no_content(admin.delete('/attributes/' + attr['uuid'],
                                           headers=accept))
    helpers.assert_error(admin.get('/attributes/' + attr['uuid']), 404)
    helpers.assert_error(admin.delete('/attributes/' + attr['uuid']), 404)
    assert _attributes(admin, '?key=note') == []


def test_attribute_create_on_unknown_deployable_is_404(admin):
    resp = admin.post('/attributes', json={'deployable_id': 99999,
                                           'key': 'k', 'value': 'v'})
    helpers.assert_error(resp, 404, '99999')


@pytest.mark.parametrize('body', [
    {}, {'deployable_id': 1, 'key': 'k'}, {'deployable_id': '01', 'key': 'k',
                                           'value': 'v'},
    {'deployable_id': '4294967296', 'key': 'k', 'value': 'v'},
    {'attribute': {'deployable_id': 1, 'key': 'k'}},
    {'deployable_id': 0, 'key': 'k', 'value': 'v'},
    {'deployable_id': 1, 'key': '', 'value': 'v'},
    {'deployable_id': 1, 'key': 'k', 'value': 'v', 'extra': 1},
    [{'deployable_id': 1, 'key': 'k', 'value': 'v'}]])
def test_attribute_create_bad_body_is_400(admin, body):
    before = _attributes(admin)
    helpers.assert_error(admin.post('/attributes', json=body), 400)
    assert _attributes(admin) == before


@pytest.mark.parametrize('ident', ['not-a-uuid', helpers.ABSENT_UUID])
def test_attribute_unknown_is_404(admin, ident):
    helpers.assert_error(admin.get('/attributes/' + ident), 404, ident)
    helpers.assert_error(admin.delete('/attributes/' + ident), 404, ident)


# --- policy -----------------------------------------------------------

@pytest.mark.parametrize('method,path,rule', [
    ('GET', '/devices', 'cyborg:device:get_all'),
    ('GET', '/devices/{device}', 'cyborg:device:get_one'),
    ('POST', '/devices/{device}/enable', 'cyborg:device:enable'),
    ('POST', '/devices/{device}/disable', 'cyborg:device:disable'),
    ('GET', '/deployables', 'cyborg:deployable:get_all'),
    ('GET', '/deployables/{deployable}', 'cyborg:deployable:get_one'),
    ('GET', '/attributes', 'cyborg:attribute:get_all'),
    ('GET', '/attributes/{attribute}', 'cyborg:attribute:get_one'),
    ('POST', '/attributes', 'cyborg:attribute:create'),
    ('DELETE', '/attributes/{attribute}', 'cyborg:attribute:delete'),
])
def test_non_admin_is_403(admin, stack, method, path, rule):
    idents = {'device': _devices(admin)[0]['uuid'],
              'deployable': admin.get('/deployables').json()[
                  'deployables'][0]['uuid'],
              'attribute': _attributes(admin)[0]['uuid']}
    before = (_devices(stack.client(cyborg_api.ADMIN, version='2.3')),
              _attributes(admin))
    for headers in (cyborg_api.member('inv-project'),
                    helpers.member_service('inv-project')):
        client = stack.client(headers)
        kwargs = {}
        if method == 'POST' and path == '/attributes':
            kwargs['json'] = {'deployable_id': 1, 'key': 'k', 'value': 'v'}
        resp = client.request(method, path.format(**idents), **kwargs)
        message = helpers.assert_error(resp, 403)
        assert message == ('Access was denied to the following resource: '
                           + rule)
    assert before == (_devices(stack.client(cyborg_api.ADMIN,
                                            version='2.3')),
                      _attributes(admin))
