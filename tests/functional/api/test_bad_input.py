"""Bad input of every kind gives a 4xx in the error envelope (never a
5xx, HTML or a traceback) and changes no stored data."""

import json

import pytest
import requests

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

MAX_BODY = 112 * 1024
JSON = {'Content-Type': 'application/json'}
INJECTIONS = ["' OR 1=1 --", '<script>alert(1)</script>', '"; DROP TABLE '
              'device_profiles; --', '../../etc/passwd', '%00', '${jndi:x}']


@pytest.fixture(scope='module')
def seeded(stack):
    """A profile and an ARQ, so that a failed write has data to spoil."""
    admin = stack.client(cyborg_api.ADMIN)
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}],
                                name='seeded-dp')
    arq = helpers.create_arqs(admin, dp['name'])[0]
    return dp, arq


def _snapshot(admin):
    """Everything the API can list, for before/after comparisons."""
    snap = {}
    for path, key in (('/device_profiles', 'device_profiles'),
                      ('/accelerator_requests', 'arqs'),
                      ('/devices', 'devices'),
                      ('/deployables', 'deployables'),
                      ('/attributes', 'attributes')):
        resp = admin.get(path)
        assert resp.status_code == 200
        snap[key] = resp.json()[key]
    return snap


def _assert_client_error(resp, status=None):
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.text[:300])
    if status is not None:
        assert resp.status_code == status, resp.text[:300]
    assert '<html' not in resp.text.lower()
    assert 'Traceback' not in resp.text
    return helpers.fault(resp)['faultstring']


WRITES = [
    ('POST', '/device_profiles'),
    ('DELETE', '/device_profiles/seeded-dp'),
    ('POST', '/accelerator_requests'),
    ('PATCH', '/accelerator_requests'),
    ('POST', '/attributes'),
]


@pytest.mark.parametrize('method,path', WRITES[:1] + WRITES[2:])
@pytest.mark.parametrize('raw', [
    b'{', b'{"name": }', b'[{"name": "x",}]', b'nul', b'\xff\xfe\x00',
    b'{"a": 1} trailing', b"{'single': 'quotes'}"])
def test_malformed_json_is_400(admin, stack, seeded, method, path, raw):
    before = _snapshot(admin)
    resp = admin.request(method, path, data=raw, headers=JSON)
    message = _assert_client_error(resp, 400)
    if not raw.startswith(b'\xff'):
        # Bytes that are not UTF-8 are refused before the body is read.
        assert 'JSON' in message
    assert _snapshot(admin) == before


@pytest.mark.parametrize('method,path', WRITES[:1] + WRITES[2:])
def test_empty_body_is_400(admin, seeded, method, path):
    before = _snapshot(admin)
    message = _assert_client_error(
        admin.request(method, path, data=b'', headers=JSON), 400)
    assert 'no JSON body' in message
    assert _snapshot(admin) == before


@pytest.mark.parametrize('method,path,body', [
    ('POST', '/device_profiles', [{'name': 5, 'groups': [{}]}]),
    ('POST', '/device_profiles', [{'name': 'x', 'groups': {'a': 'b'}}]),
    ('POST', '/device_profiles', [{'name': 'x', 'groups': ['str']}]),
    ('POST', '/device_profiles', [{'name': 'x', 'groups': [{'resources:'
                                                            'FPGA': None}]}]),
    ('POST', '/device_profiles', [{'name': ['x'], 'groups': [{}]}]),
    ('POST', '/device_profiles', [{'name': 'x', 'groups': [{}],
                                   'description': 7}]),
    ('POST', '/accelerator_requests', {'device_profile_name': {'a': 1}}),
    ('POST', '/accelerator_requests', {'device_profile_name': True}),
    ('POST', '/accelerator_requests', {'device_profile_name': 'seeded-dp',
                                       'image_uuid': 5}),
    ('PATCH', '/accelerator_requests', {helpers.new_uuid(): {'op': 'add'}}),
    ('PATCH', '/accelerator_requests', {helpers.new_uuid(): [5]}),
    ('PATCH', '/accelerator_requests',
     {helpers.new_uuid(): [{'op': 'add', 'path': '/hostname', 'value': 5}]}),
    ('POST', '/attributes', {'deployable_id': 'one', 'key': 'k',
                             'value': 'v'}),
    ('POST', '/attributes', {'deployable_id': 1.5, 'key': 'k', 'value': 'v'}),
    ('POST', '/attributes', {'deployable_id': 1, 'key': 1, 'value': 'v'}),
    ('POST', '/attributes', {'deployable_id': 1, 'key': 'k', 'value': None}),
])
def test_wrong_types_are_400(admin, service, seeded, method, path, body):
    before = _snapshot(admin)
    _assert_client_error(service.request(method, path, json=body), 400)
    assert _snapshot(admin) == before


@pytest.mark.parametrize('method,path,body', [
    # Ids are 32-bit integers (PostgreSQL refuses to compare with more).
    ('POST', '/attributes', {'deployable_id': 2 ** 31, 'key': 'k',
                             'value': 'v'}),
    ('GET', '/attributes?deployable_id=%d' % 2 ** 31, None),
    ('GET', '/attributes?deployable_id=-99999999999', None),
    # A profile asks for at most MAX_ARQS_PER_PROFILE accelerators: each
    # is a row when Nova creates the ARQs.
    ('POST', '/device_profiles', [{'name': 'huge', 'groups': [
        {'resources:FPGA': '99999999999'}]}]),
    ('POST', '/device_profiles', [{'name': 'many', 'groups': [
        {'resources:FPGA': '100'}, {'resources:GPU': '29'}]}]),
])
def test_out_of_range_numbers_are_400(admin, seeded, method, path, body):
    before = _snapshot(admin)
    _assert_client_error(admin.request(method, path, json=body), 400)
    assert _snapshot(admin) == before


@pytest.mark.parametrize('method,path,body', [
    ('POST', '/device_profiles', [{'name': 'x', 'groups': [
        {'resources:FPGA': '1'}], 'id': 5}]),
    ('POST', '/device_profiles', [{'name': 'x', 'groups': [
        {'resources:FPGA': '1'}], 'created_at': 'now'}]),
    ('POST', '/accelerator_requests', {'device_profile_name': 'seeded-dp',
                                       'state': 'Bound'}),
    ('POST', '/accelerator_requests', {'device_profile_name': 'seeded-dp',
                                       'project_id': 'someone-else'}),
    ('PATCH', '/accelerator_requests', {helpers.new_uuid(): [
        {'op': 'remove', 'path': '/hostname', 'from': '/x'}]}),
    ('POST', '/attributes', {'deployable_id': 1, 'key': 'k', 'value': 'v',
                             'uuid': helpers.new_uuid()}),
])
def test_unknown_fields_are_400(admin, service, seeded, method, path, body):
    before = _snapshot(admin)
    message = _assert_client_error(service.request(method, path, json=body),
                                   400)
    assert 'Additional properties are not allowed' in message
    assert _snapshot(admin) == before


@pytest.mark.parametrize('text', INJECTIONS)
def test_injection_strings_in_bodies(admin, service, seeded, text):
    before = _snapshot(admin)
    _assert_client_error(admin.post('/device_profiles', json=[
        {'name': text, 'groups': [{'resources:FPGA': '1'}]}]), 400)
    _assert_client_error(admin.post('/device_profiles', json=[
        {'name': 'inj', 'groups': [{'resources:' + text: '1'}]}]), 400)
    _assert_client_error(admin.post('/device_profiles', json=[
        {'name': 'inj', 'groups': [{'resources:FPGA': text}]}]), 400)
    _assert_client_error(admin.post('/accelerator_requests', json={
        'device_profile_name': text}), 404)
    _assert_client_error(service.patch('/accelerator_requests', json={
        seeded[1]['uuid']: [{'op': 'add', 'path': '/hostname', 'value': text},
                            {'op': 'add', 'path': '/device_rp_uuid',
                             'value': text},
                            {'op': 'add', 'path': '/instance_uuid',
                             'value': helpers.new_uuid()}]}), 400)
    _assert_client_error(admin.post('/attributes', json={
        'deployable_id': text, 'key': text, 'value': text}), 400)
    assert _snapshot(admin) == before


@pytest.mark.parametrize('text', INJECTIONS)
def test_injection_strings_in_paths_and_queries(admin, service, seeded,
                                                text):
    before = _snapshot(admin)
    v22 = admin.session.headers.copy()
    v22['OpenStack-API-Version'] = 'accelerator 2.2'
    base = admin.base
    for method, url, params, headers, expected in [
            ('GET', '/device_profiles', {'name': text}, None, 200),
            ('GET', '/device_profiles/' + text, None, v22, 404),
            ('DELETE', '/device_profiles', {'value': text}, None, 404),
            ('GET', '/accelerator_requests', {'instance': text}, None, 400),
            ('GET', '/accelerator_requests/' + text, None, None, 404),
            ('DELETE', '/accelerator_requests', {'arqs': text}, None, 404),
            ('DELETE', '/accelerator_requests', {'instance': text}, None,
             400),
            ('GET', '/devices', {'type': text}, None, 200),
            ('GET', '/devices/' + text, None, None, 404),
            ('GET', '/deployables', {'filters.field': 'name',
                                     'filters.value': text}, None, 200),
            ('GET', '/deployables/' + text, None, None, 400),
            ('GET', '/attributes', {'key': text}, None, 200),
            ('GET', '/attributes/' + text, None, None, 404),
            ('DELETE', '/attributes/' + text, None, None, 404)]:
        resp = service.request(method, url, params=params, headers=headers)
        if url.endswith(text) and ('/' in text or '%' in text):
            # The text splits or decodes as a path: any 4xx will do.
            expected = None
        if expected == 200:
            assert resp.status_code == 200, (url, resp.text[:300])
            assert list(resp.json().values()) == [[]]
        else:
            _assert_client_error(resp, expected)
    assert admin.base == base
    assert _snapshot(admin) == before


@pytest.mark.parametrize('method,url', [
    ('GET', '/accelerator_requests?instance=%ff'),
    ('GET', '/devices?type=%C3%28'),
    ('GET', '/device_profiles?name=%80abc'),
    ('DELETE', '/accelerator_requests?arqs=%fe%ff'),
    ('GET', '/deployables/%ff'),
    ('DELETE', '/attributes/%c0%af')])
def test_bytes_that_are_not_utf8_in_urls_are_400(admin, service, seeded,
                                                  method, url):
    before = _snapshot(admin)
    resp = service.request(method, url)
    assert 'UTF-8' in _assert_client_error(resp, 400)
    assert _snapshot(admin) == before


@pytest.mark.parametrize('name', ['ünïcødé', 'имя', '名前', 'emoji-😀'])
def test_unicode_names(admin, seeded, name):
    """Profile names allow only [a-zA-Z0-9-_]; other names are refused
    with 400, or are simply unknown where they are looked up."""
    before = _snapshot(admin)
    message = _assert_client_error(admin.post('/device_profiles', json=[
        {'name': name, 'groups': [{'resources:FPGA': '1'}]}]), 400)
    assert 'does not match' in message
    _assert_client_error(admin.post('/accelerator_requests', json={
        'device_profile_name': name}), 404)
    resp = admin.get('/device_profiles', params={'name': name})
    assert resp.status_code == 200
    assert resp.json() == {'device_profiles': []}
    assert _snapshot(admin) == before


def test_unicode_description_round_trips(admin):
    text = 'Ünïcødé 名前 😀 <b>bold</b> \' OR 1=1 --'
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}],
                                description=text)
    assert dp['description'] == text
    assert admin.get('/device_profiles/' + dp['uuid']).json()[
        'device_profile']['description'] == text
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['uuid']))


@pytest.mark.parametrize('method,path', WRITES)
def test_huge_body_is_413(admin, service, seeded, method, path):
    before = _snapshot(admin)
    huge = json.dumps([{'name': 'big', 'description': 'x' * (MAX_BODY + 1),
                        'groups': [{'resources:FPGA': '1'}]}]).encode()
    assert len(huge) > MAX_BODY
    resp = service.request(method, path, data=huge, headers=JSON)
    _assert_client_error(resp, 413)
    assert _snapshot(admin) == before


def test_body_just_under_the_limit_is_judged_on_content(admin, seeded):
    before = _snapshot(admin)
    body = json.dumps([{'name': 'almost-big',
                        'description': 'x' * (MAX_BODY - 200),
                        'groups': [{'resources:FPGA': '1'}]}]).encode()
    assert len(body) < MAX_BODY
    message = _assert_client_error(
        admin.post('/device_profiles', data=body, headers=JSON), 400)
    assert 'description' in message
    assert _snapshot(admin) == before


def test_failed_requests_change_nothing(admin, service, stack, seeded):
    """A run of failing writes of every kind leaves every list as it
    was, and the seeded ARQ as it was."""
    dp, arq = seeded
    before = _snapshot(admin)
    member = stack.client(cyborg_api.member('bad-input'))
    failures = [
        admin.post('/device_profiles', json=[{'name': dp['name'], 'groups': [
            {'resources:FPGA': '1'}]}]),
        admin.post('/device_profiles', json=[{'name': 'new-one', 'groups': [
            {'resources:FPGA': '1'}, {'bad': 'key'}]}]),
        member.post('/device_profiles', json=[{'name': 'by-member',
                                               'groups': [{'resources:FPGA':
                                                           '1'}]}]),
        admin.delete('/device_profiles?value=%s,missing' % dp['name']),
        admin.delete('/device_profiles/' + dp['uuid']),
        admin.post('/accelerator_requests', json={
            'device_profile_name': 'missing'}),
        admin.patch('/accelerator_requests', json=cyborg_api.bind_patch(
            [arq['uuid']], stack.aio.hostnames[0],
            stack.deployable('FPGA')['rp_uuid'], helpers.new_uuid())),
        service.patch('/accelerator_requests', json={arq['uuid']: [
            {'op': 'add', 'path': '/hostname', 'value': 'h'},
            {'op': 'remove', 'path': '/instance_uuid'}]}),
        admin.delete('/accelerator_requests?arqs=%s,%s' % (
            arq['uuid'], helpers.new_uuid())),
        member.delete('/accelerator_requests/' + arq['uuid']),
        admin.delete('/accelerator_requests?instance=' + helpers.new_uuid()),
        admin.post('/attributes', json={'deployable_id': 99999, 'key': 'k',
                                        'value': 'v'}),
        member.post('/attributes', json={'deployable_id': 1, 'key': 'k',
                                         'value': 'v'}),
        member.post('/devices/%s/disable'
                    % before['devices'][0]['uuid']),
    ]
    for resp in failures:
        _assert_client_error(resp)
    assert _snapshot(admin) == before
    assert admin.get('/accelerator_requests/' + arq['uuid']).json() == arq


def test_a_form_body_is_415(admin, seeded):
    """A body is JSON; a form (what ``curl -d`` sends by default) is
    refused for its type, as upstream refuses it."""
    before = _snapshot(admin)
    resp = admin.post('/accelerator_requests', data='device_profile_name=x',
                      headers={'Content-Type':
                               'application/x-www-form-urlencoded'})
    assert 'application/json' in _assert_client_error(resp, 415)
    assert _snapshot(admin) == before


def test_bad_requests_without_the_v2_prefix(stack, seeded):
    resp = requests.post(stack.url + '/device_profiles', data=b'{',
                         headers=dict(cyborg_api.ADMIN, **JSON), timeout=30)
    _assert_client_error(resp, 400)


# --- gaps: the program PATCH, nesting, top-level types, field limits -----

def _full_snapshot(stack):
    """Every list at the newest microversion (so device status counts),
    and each object shown on its own."""
    admin = stack.client(cyborg_api.ADMIN, version='2.3')
    snap = _snapshot(admin)
    for key, path in (('device_profiles', '/device_profiles/%s'),
                      ('arqs', '/accelerator_requests/%s'),
                      ('devices', '/devices/%s'),
                      ('deployables', '/deployables/%s'),
                      ('attributes', '/attributes/%s')):
        for item in snap[key]:
            resp = admin.get(path % item['uuid'])
            assert resp.status_code == 200, resp.text[:300]
            snap['%s/%s' % (key, item['uuid'])] = resp.json()
    return snap


def _program_path(stack):
    return '/deployables/%s/program' % stack.deployable('FPGA')['uuid']


@pytest.mark.parametrize('raw', [b'{', b'[{"op": "replace",}]', b'nul',
                                 b'\xff\xfe\x00', b'', b'[] []'])
def test_program_malformed_body_is_400(admin, stack, seeded, raw):
    before = _full_snapshot(stack)
    _assert_client_error(admin.patch(_program_path(stack), data=raw,
                                      headers=JSON), 400)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('body', [
    {'op': 'replace', 'path': '/program', 'value': []},
    [],
    [{'op': 'replace', 'path': '/program', 'value': [{'image_uuid': 5}]}],
    [{'op': 'replace', 'path': '/program',
      'value': [{'image_uuid': 'not-a-uuid'}]}],
    [{'op': 'add', 'path': '/program',
      'value': [{'image_uuid': helpers.new_uuid()}]}],
    [{'op': 'replace', 'path': '/name',
      'value': [{'image_uuid': helpers.new_uuid()}]}],
    [{'op': 'replace', 'path': '/program', 'extra': 1,
      'value': [{'image_uuid': helpers.new_uuid()}]}],
    [{'op': 'replace', 'path': '/program',
      'value': [{'image_uuid': helpers.new_uuid(), 'driver': 'x'}]}],
    [{'op': 'replace', 'path': '/program',
      'value': [{'image_uuid': helpers.new_uuid()}]}] * 2,
])
def test_program_bad_bodies_are_400(admin, stack, seeded, body):
    before = _full_snapshot(stack)
    _assert_client_error(admin.patch(_program_path(stack), json=body), 400)
    assert _full_snapshot(stack) == before


def test_program_huge_body_is_413(admin, stack, seeded):
    before = _full_snapshot(stack)
    huge = json.dumps([{'op': 'replace', 'path': '/program', 'value': [
        {'image_uuid': 'x' * (MAX_BODY + 1)}]}]).encode()
    _assert_client_error(admin.patch(_program_path(stack), data=huge,
                                     headers=JSON), 413)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('method,path', WRITES[:1] + WRITES[2:])
@pytest.mark.parametrize('raw', [b'[' * 50000 + b']' * 50000,
                                 b'{"a":' * 15000 + b'1' + b'}' * 15000])
def test_deeply_nested_json_is_400(admin, service, stack, seeded, method,
                                   path, raw):
    """Nesting deep enough to exhaust the parser's recursion, under the
    size limit: a 400, not a 500."""
    assert len(raw) < MAX_BODY
    before = _full_snapshot(stack)
    _assert_client_error(service.request(method, path, data=raw,
                                         headers=JSON), 400)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('method,path', WRITES[:1] + WRITES[2:])
@pytest.mark.parametrize('body', [None, 5, 'text', True, [], {}, [[]],
                                  [None]])
def test_wrong_top_level_types_are_400(admin, service, stack, seeded,
                                       method, path, body):
    before = _full_snapshot(stack)
    _assert_client_error(service.request(
        method, path, data=json.dumps(body), headers=JSON), 400)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('body', [
    [{'name': 'n' * 256, 'groups': [{'resources:FPGA': '1'}]}],
    [{'name': 'long-key', 'groups': [{'accel:' + 'k' * 300: '1'}]}],
    [{'name': 'long-value', 'groups': [{'accel:k': 'v' * 256}]}],
    [{'name': 'many-keys', 'groups': [
        {'accel:k%d' % i: 'v' for i in range(65)}]}],
    [{'name': 'many-groups', 'groups': [{'resources:FPGA': '1'}] * 65}],
    [{'name': 'two', 'groups': [{'resources:FPGA': '1'}]}] * 2,
    [{'name': 'bad-uuid', 'uuid': 'nope',
      'groups': [{'resources:FPGA': '1'}]}],
    [{'name': 'no-groups', 'groups': []}],
    [{'name': '', 'groups': [{'resources:FPGA': '1'}]}],
    [{'name': 'nul\x00byte', 'groups': [{'resources:FPGA': '1'}]}],
    [{'name': 'rc-not-int', 'groups': [{'resources:FPGA': 'one'}]}],
    [{'name': 'rc-negative', 'groups': [{'resources:FPGA': '-1'}]}],
    [{'name': 'std-trait', 'groups': [{'trait:OWNER_CYBORG': 'required'}]}],
    [{'name': 'trait-val', 'groups': [{'trait:CUSTOM_X': 'maybe'}]}],
])
def test_device_profile_limits_are_400(admin, stack, seeded, body):
    before = _full_snapshot(stack)
    _assert_client_error(admin.post('/device_profiles', json=body), 400)
    assert _full_snapshot(stack) == before


def test_patch_limits_are_400(service, stack, seeded):
    before = _full_snapshot(stack)
    unbind = cyborg_api.unbind_patch([helpers.new_uuid()
                                      for _ in range(257)])
    _assert_client_error(service.patch('/accelerator_requests',
                                       json=unbind), 400)
    arq = seeded[1]['uuid']
    for ops in ([], [{'op': 'remove', 'path': '/hostname'}] * 9,
                [{'op': 'add', 'path': '/hostname', 'value': 'h' * 256}]):
        _assert_client_error(service.patch('/accelerator_requests',
                                           json={arq: ops}), 400)
    _assert_client_error(service.patch('/accelerator_requests', json={
        'not-a-uuid': [{'op': 'remove', 'path': '/hostname'}]}), 400)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('name', ['ünïcødé', 'имя', '名前', 'emoji-😀',
                                  'a\u200bb', 'ＡＢＣ'])
def test_unicode_names_in_paths_are_unknown(admin, stack, seeded, name):
    before = _full_snapshot(stack)
    v22 = {'OpenStack-API-Version': 'accelerator 2.2'}
    _assert_client_error(admin.get('/device_profiles/' + name,
                                   headers=v22), 404)
    _assert_client_error(admin.delete('/device_profiles/' + name), 404)
    _assert_client_error(admin.delete('/device_profiles',
                                      params={'value': name}), 404)
    for path in ('/accelerator_requests/', '/devices/', '/attributes/'):
        _assert_client_error(admin.get(path + name), 404)
    _assert_client_error(admin.get('/deployables/' + name), 400)
    assert _full_snapshot(stack) == before


@pytest.mark.parametrize('version', ['accelerator 2.9', 'accelerator 3.0',
                                     '10', 'accelerator x.y'])
def test_bad_microversion_on_writes_is_406(admin, service, stack, seeded,
                                           version):
    before = _full_snapshot(stack)
    headers = dict(JSON, **{'OpenStack-API-Version': version})
    for method, path, body in [
            ('POST', '/device_profiles', [{'name': 'mv', 'groups': [
                {'resources:FPGA': '1'}]}]),
            ('POST', '/accelerator_requests', {
                'device_profile_name': seeded[0]['name']}),
            ('DELETE', '/device_profiles/' + seeded[0]['name'], None),
            ('DELETE', '/accelerator_requests/' + seeded[1]['uuid'], None),
            ('POST', '/attributes', {'deployable_id': 1, 'key': 'mv',
                                     'value': 'v'})]:
        resp = service.request(method, path, headers=headers,
                               data=None if body is None
                               else json.dumps(body))
        _assert_client_error(resp, 406)
    assert _full_snapshot(stack) == before


def test_batch_of_failures_changes_nothing_anywhere(admin, service, stack,
                                                    seeded):
    """Failing requests of every kind, with the whole visible state (each
    list at 2.3 and each object on its own) compared before and after."""
    dp, arq = seeded
    before = _full_snapshot(stack)
    member = stack.client(cyborg_api.member('bad-input-2'))
    device = before['devices'][0]['uuid']
    program = _program_path(stack)
    failures = [
        member.patch(program, json=[{'op': 'replace', 'path': '/program',
                                     'value': [{'image_uuid':
                                                helpers.new_uuid()}]}]),
        admin.patch(program, data=b'[' * 50000, headers=JSON),
        member.post('/devices/%s/enable' % device),
        admin.post('/devices/%s/disable' % helpers.new_uuid()),
        member.delete('/attributes/' + before['attributes'][0]['uuid']),
        admin.delete('/attributes/' + helpers.new_uuid()),
        member.delete('/device_profiles/' + dp['uuid']),
        member.patch('/accelerator_requests', json=cyborg_api.unbind_patch(
            [arq['uuid']])),
        service.patch('/accelerator_requests/' + arq['uuid'],
                      json=cyborg_api.unbind_patch([helpers.new_uuid()])),
        service.delete('/accelerator_requests',
                       params={'arqs': arq['uuid'], 'instance':
                               helpers.new_uuid()}),
        admin.post('/accelerator_requests', json={
            'device_profile_name': dp['name'], 'image_uuid': 'x' * 37}),
        admin.post('/attributes', json={'deployable_id': 0, 'key': 'k',
                                        'value': 'v'}),
    ]
    for resp in failures:
        _assert_client_error(resp)
    assert _full_snapshot(stack) == before
