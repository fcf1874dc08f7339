"""Hostile requests of every class get a 4xx in the error envelope, never
a 5xx, and leave every stored object as it was.

Each class of case is sent as real HTTP to the running API (raw bytes
where no client library would send them): form and multipart bodies,
empty ids, NUL characters (on SQLite and on PostgreSQL, which refuses
NUL in text), nesting, bytes that are not UTF-8, unpaired surrogates,
non-ASCII request targets, media types, methods, Accept headers,
Pecan's ``_method`` and its path-segment lookups, and programming a
deployable that is not an FPGA.
"""

import json
import logging

import pytest

from cyborg_lite.api import guard
from tests.fixtures import cyborg_api
from tests.fixtures import databases
from tests.fixtures import raw_http
from tests.functional.api import helpers

V23 = {'OpenStack-API-Version': 'accelerator 2.3'}
JSON = {'Content-Type': 'application/json'}
COLLECTIONS = ('device_profiles', 'accelerator_requests', 'deployables',
               'devices', 'attributes')
# The key of each collection's list.
LIST_KEYS = {'device_profiles': 'device_profiles',
             'accelerator_requests': 'arqs', 'deployables': 'deployables',
             'devices': 'devices', 'attributes': 'attributes'}


def _seed(stack):
    """A profile, an ARQ and an attribute: data a bad request could
    spoil; returns the ids that fill the routes."""
    admin = stack.client(cyborg_api.ADMIN)
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}],
                                name='hostile-dp', description='seeded')
    arq = helpers.create_arqs(admin, dp['name'])[0]
    fpga = stack.deployable('FPGA')
    gpu = stack.deployable('PGPU')
    resp = admin.post('/attributes', json={'deployable_id': 1,
                                           'key': 'hostile', 'value': 'v'})
    assert resp.status_code == 201, resp.text
    device = admin.get('/devices').json()['devices'][0]
    return {'stack': stack, 'dp': dp, 'arq': arq, 'fpga': fpga, 'gpu': gpu,
            'device': device, 'attribute': resp.json()}


@pytest.fixture(scope='module')
def world(stack):
    return _seed(stack)


@pytest.fixture(scope='module')
def pg_stack(tmp_path_factory):
    """The same stack on PostgreSQL (the production topology's database),
    which refuses NUL in every text column."""
    with databases.pg_database() as url:
        with cyborg_api.CyborgStack(tmp_path_factory.mktemp('pg-stack'),
                                    db_url=url, hosts=1) as stack:
            yield stack


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def any_world(request, world):
    if request.param == 'sqlite':
        return world
    return _seed(request.getfixturevalue('pg_stack'))


def snapshot(stack):
    """Every list at 2.3, and each object shown on its own."""
    admin = stack.client(cyborg_api.ADMIN, version='2.3')
    snap = {}
    for collection, key in LIST_KEYS.items():
        resp = admin.get('/' + collection)
        assert resp.status_code == 200, resp.text[:300]
        for item in resp.json()[key]:
            one = admin.get('/%s/%s' % (collection, item['uuid']))
            assert one.status_code == 200, one.text[:300]
            snap['%s/%s' % (collection, item['uuid'])] = one.json()
        snap[collection] = resp.json()[key]
    return snap


def operations(w):
    """(method, path) of every route and method the API serves, with the
    seeded objects' ids; the root documents with their GET."""
    ids = {'device_profiles': w['dp']['uuid'],
           'accelerator_requests': w['arq']['uuid'],
           'deployables': w['fpga']['uuid'],
           'devices': w['device']['uuid'],
           'attributes': w['attribute']['uuid']}
    result = []
    for shape, methods in guard.ROUTES.items():
        path = '/v2' + ''.join(
            '/' + (ids[shape[0]] if part == guard.ID else part)
            for part in shape)
        result += [(method, path) for method in methods]
    return result


def send(stack, method, target, headers=None, body=b'', who=None):
    return raw_http.request(stack.url, method, target,
                            dict(who or cyborg_api.SERVICE,
                                 **(headers or {})), body)


def assert_refused(resp, status, *fragments):
    """A 4xx of ``status`` in the envelope; returns the faultstring."""
    assert resp.status == status, (resp.status, resp.body[:300])
    assert resp.headers['content-type'].startswith('application/json')
    body = resp.json()
    assert list(body) == ['error_message'], body
    fault = json.loads(body['error_message'])
    assert fault['faultcode'] == 'Client', fault
    for fragment in fragments:
        assert fragment in fault['faultstring'], (fragment, fault)
    return fault['faultstring']


# --- media types ------------------------------------------------------

FORM_TYPES = ['multipart/form-data', 'multipart/form-data; boundary=',
              'multipart/form-data; boundary="unterminated',
              'multipart/form-data; boundary=b', 'multipart/mixed',
              'application/x-www-form-urlencoded']
MULTIPART = (b'--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n'
             b'x\r\n--c')


@pytest.mark.parametrize('content_type', FORM_TYPES)
def test_form_and_multipart_bodies_are_415_on_every_route(world,
                                                          content_type):
    """WebOb parsed these forms while Pecan routed, and a multipart type
    without a valid boundary raised: a 500 on 12 operations."""
    stack = world['stack']
    before = snapshot(stack)
    for method, path in operations(world):
        resp = send(stack, method, path, {'Content-Type': content_type},
                    MULTIPART)
        assert_refused(resp, 415, 'must be JSON')
    assert snapshot(stack) == before


@pytest.mark.parametrize('content_type', FORM_TYPES)
def test_a_form_type_without_a_body_is_ignored(world, content_type):
    """A request with no body has no media type: it is judged as if the
    type were absent."""
    stack = world['stack']
    before = snapshot(stack)
    headers = {'Content-Type': content_type, 'Content-Length': '0'}
    resp = send(stack, 'GET', '/v2/device_profiles', headers)
    assert resp.status == 200
    assert 'hostile-dp' in [p['name'] for p in
                            resp.json()['device_profiles']]
    for method, path in (('POST', '/v2/device_profiles'),
                         ('POST', '/v2/attributes'),
                         ('PATCH', '/v2/accelerator_requests')):
        assert_refused(send(stack, method, path, headers), 400,
                       'no JSON body')
    assert_refused(send(stack, 'DELETE', '/v2/attributes/' +
                        helpers.new_uuid(), headers), 404)
    assert snapshot(stack) == before


@pytest.mark.parametrize('content_type', [
    'text/plain', 'application/xml', 'text/html', 'text/xml', 'garbage',
    'application/json-patch+json', 'application/json; charset=utf-16',
    'application/json; charset=latin-1', 'application/octet-stream'])
def test_bodies_that_are_not_json_are_415(world, content_type):
    """Upstream (WSME) reads a body by its type and answers 415 to a
    type it cannot read, as real clients never send one (openstacksdk,
    python-cyborgclient and keystoneauth send application/json)."""
    stack = world['stack']
    before = snapshot(stack)
    body = json.dumps([{'name': 'typed', 'groups': [
        {'resources:FPGA': '1'}]}]).encode()
    if 'utf-16' in content_type:
        body = body.decode().encode('utf-16')
    resp = send(stack, 'POST', '/v2/device_profiles',
                {'Content-Type': content_type}, body)
    assert_refused(resp, 415, 'JSON')
    assert snapshot(stack) == before


@pytest.mark.parametrize('headers', [
    {}, {'Content-Type': 'application/json; charset=UTF-8'},
    {'Content-Type': 'Application/JSON'},
    {'Content-Type': 'text/javascript'},
    {'Content-Type': 'application/javascript'}])
def test_json_and_untyped_bodies_are_read(world, headers):
    stack = world['stack']
    name = helpers.unique('typed')
    body = json.dumps([{'name': name, 'groups': [
        {'resources:FPGA': '1'}]}]).encode()
    resp = send(stack, 'POST', '/v2/device_profiles', headers, body)
    assert resp.status == 201, resp.body[:300]
    assert resp.json()['name'] == name
    helpers.assert_no_content(stack.client().delete(
        '/device_profiles/' + name))


# --- paths ------------------------------------------------------------

@pytest.mark.parametrize('collection', COLLECTIONS)
def test_empty_ids_are_404(world, collection):
    """An empty segment after a collection names nothing; Pecan called
    the handler without its id (a 500 on 15 of 15 paths)."""
    stack = world['stack']
    before = snapshot(stack)
    for prefix in ('/v2', '', '/accelerator/v2'):
        for suffix in ('//', '/%2F', '/%2F/', '///', '//program',
                       '//enable', '/%2F/program', '/%2f/disable', '/x//',
                       '//%2F'):
            for method in ('GET', 'POST', 'PATCH', 'PUT', 'DELETE'):
                resp = send(stack, method, prefix + '/' + collection +
                            suffix, JSON, b'{}')
                assert_refused(resp, 404, 'could not be found')
            resp = send(stack, 'HEAD', prefix + '/' + collection + suffix)
            assert (resp.status, resp.body) == (404, b'')
    assert snapshot(stack) == before


@pytest.mark.parametrize('ident', ['__class__', '__dict__', '__doc__',
                                   '_custom_actions', '_route', 'get_all',
                                   'get_one', 'index', 'delete', 'new',
                                   'edit', '_lookup'])
def test_ids_that_name_controller_attributes_are_ids(world, ident):
    """Pecan took a segment naming an attribute of the controller for a
    sub-controller (``/devices/__class__`` failed with a 500)."""
    stack = world['stack']
    before = snapshot(stack)
    for collection in COLLECTIONS:
        path = '/v2/%s/%s' % (collection, ident)
        resp = send(stack, 'GET', path, V23)
        assert_refused(resp, 400 if collection == 'deployables' else 404)
        if collection in ('device_profiles', 'accelerator_requests',
                          'attributes'):
            assert_refused(send(stack, 'DELETE', path), 404)
    assert snapshot(stack) == before


def test_a_profile_named_like_a_controller_attribute_is_found(world):
    admin = world['stack'].client(cyborg_api.ADMIN, version='2.2')
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}],
                                name='__class__')
    resp = admin.get('/device_profiles/__class__')
    assert resp.status_code == 200, resp.text[:300]
    assert resp.json()['device_profile']['uuid'] == dp['uuid']
    helpers.assert_no_content(admin.delete('/device_profiles/__class__'))


# --- NUL characters ---------------------------------------------------

def _nul_queries(w):
    return [('GET', '/v2/device_profiles?name=a%00b'),
            ('GET', '/v2/accelerator_requests?instance=a%00b'),
            ('GET', '/v2/accelerator_requests?bind_state=%00'),
            ('GET', '/v2/devices?type=a%00b'),
            ('GET', '/v2/devices?vendor=a%00b'),
            ('GET', '/v2/devices?hostname=a%00b'),
            ('GET', '/v2/deployables?filters.field=name&'
                    'filters.value=a%00b'),
            ('GET', '/v2/attributes?key=a%00b'),
            ('GET', '/v2/attributes?deployable_id=1%00'),
            ('GET', '/v2/attributes?k%00ey=x'),
            ('DELETE', '/v2/device_profiles?value=hostile-dp%00'),
            ('DELETE', '/v2/accelerator_requests?arqs=%s%%00'
                       % w['arq']['uuid']),
            ('DELETE', '/v2/accelerator_requests?instance=a%00b')]


def _nul_paths(w):
    return [('GET', '/v2/device_profiles/hostile-dp%00'),
            ('DELETE', '/v2/device_profiles/hostile-dp%00'),
            ('GET', '/v2/accelerator_requests/%s%%00' % w['arq']['uuid']),
            ('DELETE', '/v2/accelerator_requests/a%00b'),
            ('PATCH', '/v2/accelerator_requests/a%00b'),
            ('GET', '/v2/devices/a%00b'),
            ('POST', '/v2/devices/%s%%00/disable' % w['device']['uuid']),
            ('GET', '/v2/deployables/a%00b'),
            ('PATCH', '/v2/deployables/a%00b/program'),
            ('GET', '/v2/attributes/a%00b'),
            ('DELETE', '/v2/attributes/%s%%00' % w['attribute']['uuid'])]


def _string_bodies(w, text):
    """A request for every string that a body carries into SQL, each
    holding ``text``."""
    rp = w['fpga']['rp_uuid']
    arq = w['arq']['uuid']

    def profile(**fields):
        body = {'name': 'bad-string', 'groups': [{'resources:FPGA': '1'}]}
        body.update(fields)
        return ('POST', '/v2/device_profiles', [body])

    def bind(**fields):
        values = {'hostname': 'h', 'device_rp_uuid': rp,
                  'instance_uuid': helpers.new_uuid()}
        values.update(fields)
        return ('PATCH', '/v2/accelerator_requests', {arq: [
            {'op': 'add', 'path': '/' + key, 'value': value}
            for key, value in values.items()]})

    return [
        profile(name='a%sb' % text),
        profile(description='a%sb' % text),
        profile(groups=[{'resources:FPGA': '1', 'accel:k%s' % text: 'v'}]),
        profile(groups=[{'resources:FPGA': '1', 'accel:k': 'v%s' % text}]),
        profile(groups=[{'resources:FPGA': '1',
                         'trait:CUSTOM_%s' % text: 'required'}]),
        ('POST', '/v2/accelerator_requests',
         {'device_profile_name': 'hostile-dp%s' % text}),
        ('POST', '/v2/accelerator_requests',
         {'device_profile_name': 'hostile-dp', 'image_uuid': text}),
        bind(hostname='host%s' % text),
        bind(device_rp_uuid=rp + text),
        bind(instance_uuid=helpers.new_uuid() + text),
        bind(project_id='p%s' % text),
        ('PATCH', '/v2/accelerator_requests', {arq + text: [
            {'op': 'remove', 'path': '/hostname'}]}),
        ('POST', '/v2/attributes', {'deployable_id': 1,
                                    'key': 'k%s' % text, 'value': 'v'}),
        ('POST', '/v2/attributes', {'deployable_id': 1, 'key': 'k',
                                    'value': 'v%s' % text}),
        ('PATCH', '/v2/deployables/%s/program' % w['fpga']['uuid'],
         [{'op': 'replace', 'path': '/program',
           'value': [{'image_uuid': helpers.new_uuid() + text}]}]),
    ]


def test_nul_characters_are_400_before_the_database(any_world):
    """PostgreSQL refuses NUL in text (SQLite let it through): a NUL in
    a name, a filter, an id or any string of a body is refused before
    any database call, on both."""
    stack = any_world['stack']
    before = snapshot(stack)
    for method, target in _nul_queries(any_world) + _nul_paths(any_world):
        resp = send(stack, method, target, dict(JSON, **V23),
                    b'{}' if method in ('PATCH', 'POST') else b'')
        assert_refused(resp, 400, 'NUL')
    for method, path, body in _string_bodies(any_world, '\x00'):
        resp = send(stack, method, path, dict(JSON, **{
            'OpenStack-API-Version': 'accelerator 2.1'}),
            json.dumps(body).encode())
        assert_refused(resp, 400, 'NUL')
    assert snapshot(stack) == before


def test_identities_longer_than_kept_are_400(any_world):
    """With noauth the client names its project and user; one longer than
    the ARQ table keeps failed in PostgreSQL's insert."""
    stack = any_world['stack']
    before = snapshot(stack)
    rp = any_world['fpga']['rp_uuid']
    for header in ('X-Project-Id', 'X-User-Id'):
        who = dict(cyborg_api.SERVICE, **{header: 'x' * 256})
        for method, path, body in [
                ('POST', '/v2/accelerator_requests',
                 {'device_profile_name': 'hostile-dp'}),
                ('PATCH', '/v2/accelerator_requests', cyborg_api.bind_patch(
                    [any_world['arq']['uuid']], 'h', rp,
                    helpers.new_uuid())),
                ('GET', '/v2/accelerator_requests', None)]:
            resp = send(stack, method, path, JSON,
                        b'' if body is None else json.dumps(body).encode(),
                        who=who)
            assert_refused(resp, 400, 'longer than 255')
    assert snapshot(stack) == before


# --- text that is not UTF-8 or not Unicode ----------------------------

BAD_ESCAPES = ['%ff', '%c0%af', '%e0%80%af', '%f8%88%80%80%80', '%ed%a0%80',
               '%ed%bf%bf', '%80', '%c3']


@pytest.mark.parametrize('escape', BAD_ESCAPES)
def test_paths_and_queries_that_are_not_utf8_are_400(world, escape):
    """Invalid bytes, overlong forms and encoded surrogates."""
    stack = world['stack']
    before = snapshot(stack)
    for method, target in [
            ('GET', '/v2/device_profiles?name=' + escape),
            ('GET', '/v2/device_profiles/' + escape),
            ('DELETE', '/v2/device_profiles/' + escape),
            ('DELETE', '/v2/device_profiles?value=' + escape),
            ('GET', '/v2/devices?hostname=' + escape),
            ('POST', '/v2/devices/%s/enable' % escape),
            ('GET', '/v2/attributes?key' + escape + '=x'),
            ('GET', '/v2/' + escape),
            ('PATCH', '/v2/accelerator_requests/' + escape)]:
        resp = send(stack, method, target, dict(JSON, **V23), b'{}')
        assert_refused(resp, 400, 'UTF-8')
    assert snapshot(stack) == before


def test_non_ascii_request_targets(world):
    """Raw bytes in the request line. A server may refuse them itself
    (waitress does: 400 in the envelope); where they reach the API,
    UTF-8 is read as such and anything else is a 400."""
    stack = world['stack']
    before = snapshot(stack)
    resp = send(stack, 'GET', b'/v2/device_profiles?name=caf\xc3\xa9')
    if resp.status == 200:
        assert resp.json() == {'device_profiles': []}
    else:
        assert_refused(resp, 400)
    for target, status in ((b'/v2/device_profiles/caf\xc3\xa9', 404),
                           ('/v2/\u20ac'.encode(), 404)):
        resp = send(stack, 'GET', target, V23)
        assert resp.status in (status, 400), resp.body[:300]
        assert_refused(resp, resp.status)
    for target in (b'/v2/device_profiles/caf\xe9',
                   b'/v2/device_profiles?name=\xff\xfe',
                   b'/v2/devices?type=\xed\xa0\x80', b'/v2/\xc0\xaf'):
        assert_refused(send(stack, 'GET', target, V23), 400)
    assert snapshot(stack) == before


def test_unpaired_surrogates_in_bodies_are_400(world):
    """An escaped surrogate decodes to text that UTF-8 cannot encode (a
    500 where it reached the database); raw surrogate bytes are not
    UTF-8. A surrogate pair is one character, and welcome."""
    stack = world['stack']
    before = snapshot(stack)
    for escape in ('\\ud800', '\\udfff', '\\udc00\\ud800'):
        for method, path, body in _string_bodies(world, '\x01'):
            raw = json.dumps(body).replace('\\u0001', escape).encode()
            resp = send(stack, method, path, dict(JSON, **{
                'OpenStack-API-Version': 'accelerator 2.1'}), raw)
            assert_refused(resp, 400, 'surrogate')
    raw = (b'[{"name": "raw-surrogate", "description": "\xed\xa0\x80", '
           b'"groups": [{"resources:FPGA": "1"}]}]')
    assert_refused(send(stack, 'POST', '/v2/device_profiles', JSON, raw),
                   400, 'Malformed JSON')
    assert snapshot(stack) == before
    admin = stack.client(cyborg_api.ADMIN)
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}],
                                description='\U0001f600 pair')
    assert dp['description'] == '\U0001f600 pair'
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['uuid']))


# --- methods and Accept -----------------------------------------------

def test_methods_a_route_does_not_serve_are_405_with_allow(world):
    """``PUT`` on a collection fell through Pecan's lookups to a 404."""
    stack = world['stack']
    before = snapshot(stack)
    served = {}
    for method, path in operations(world):
        served.setdefault(path, []).append(method)
    for path, methods in served.items():
        allow = ', '.join(methods + (['HEAD'] if 'GET' in methods else []))
        for method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS',
                       'TRACE', 'PROPFIND', 'FOO'):
            if method in methods:
                continue
            resp = send(stack, method, path, JSON, b'{}')
            assert_refused(resp, 405, 'not allowed')
            assert resp.headers['allow'] == allow, (method, path)
    assert snapshot(stack) == before


def test_head_is_get_without_the_body(world):
    stack = world['stack']
    for method, path in operations(world):
        if method != 'GET':
            continue
        get = send(stack, 'GET', path, V23)
        head = send(stack, 'HEAD', path, V23)
        assert (head.status, head.body) == (get.status, b''), path
        assert head.headers['content-length'] == str(len(get.body))
        assert head.headers['content-type'] == get.headers['content-type']


@pytest.mark.parametrize('accept', ['text/html', 'application/xml',
                                    'text/*', 'application/json;q=0',
                                    'image/png, text/plain'])
def test_accept_without_json_is_406_and_no_error_is_logged(world, accept,
                                                           caplog):
    """A client's mistake is no server error: Pecan logged each 406 as
    an ERROR."""
    stack = world['stack']
    before = snapshot(stack)
    with caplog.at_level(logging.INFO):
        for method, path in operations(world):
            resp = send(stack, method, path, dict(JSON, Accept=accept),
                        b'{}')
            assert_refused(resp, 406, 'Accept')
    assert [r.getMessage() for r in caplog.records
            if r.levelno >= logging.WARNING
            and r.name.startswith(('pecan', 'cyborg_lite.api'))] == []
    assert snapshot(stack) == before


@pytest.mark.parametrize('accept', ['*/*', 'application/*',
                                    'application/json',
                                    'text/html, application/json;q=0.1',
                                    'text/html,application/xhtml+xml,'
                                    'application/xml;q=0.9,*/*;q=0.8'])
def test_accept_that_admits_json_is_answered(world, accept):
    resp = send(world['stack'], 'GET', '/v2/device_profiles',
                {'Accept': accept})
    assert resp.status == 200
    assert resp.json()['device_profiles']


# --- Pecan's argument filling -----------------------------------------

def test_method_override_in_the_query_is_400(world):
    """``?_method=`` let a query string choose Pecan's handler (a POST
    could delete)."""
    stack = world['stack']
    before = snapshot(stack)
    for method, path in operations(world):
        for value in ('delete', 'put', 'get_all', '_route', 'post_delete'):
            sep = '&' if '?' in path else '?'
            for key in ('_method', '%5Fmethod'):
                resp = send(stack, method, '%s%s%s=%s' % (
                    path, sep, key, value), JSON, b'{}')
                assert_refused(resp, 400, '_method')
    assert snapshot(stack) == before


def test_handler_arguments_come_only_from_the_path(world):
    """Pecan fills a handler argument that the path leaves out from the
    query string or the JSON body, where it can be a list or a number."""
    stack = world['stack']
    before = snapshot(stack)
    arq = world['arq']['uuid']
    for method, target, body, status in [
            ('DELETE', '/v2/accelerator_requests?uuid=a&uuid=b', None, 400),
            ('DELETE', '/v2/accelerator_requests?uuid=' + arq, None, 400),
            ('DELETE', '/v2/accelerator_requests', {'uuid': 5}, 400),
            ('DELETE', '/v2/accelerator_requests', {'uuid': [arq]}, 400),
            ('DELETE', '/v2/device_profiles?ident=hostile-dp&ident=x', None,
             400),
            ('DELETE', '/v2/device_profiles', {'ident': ['hostile-dp']},
             400),
            ('PATCH', '/v2/deployables?uuid=a&uuid=b&action=program', None,
             405),
            ('PATCH', '/v2/deployables', {'uuid': 1, 'action': 'program'},
             405),
            ('DELETE', '/v2/attributes', {'uuid': 7}, 405),
            ('POST', '/v2/devices/enable', {'uuid': 5}, 405)]:
        resp = send(stack, method, target, JSON,
                    b'' if body is None else json.dumps(body).encode())
        assert_refused(resp, status)
    assert snapshot(stack) == before


# --- programming ------------------------------------------------------

def test_programming_a_gpu_is_409(world):
    """A GPU's driver can never load a bitstream: a 409 that says why,
    where the agent's refusal came back as a 502."""
    stack = world['stack']
    before = snapshot(stack)
    body = [{'op': 'replace', 'path': '/program',
             'value': [{'image_uuid': helpers.new_uuid()}]}]
    resp = stack.client(cyborg_api.ADMIN).patch(
        '/deployables/%s/program' % world['gpu']['uuid'], json=body)
    helpers.assert_error(resp, 409, 'cannot be programmed', 'PGPU',
                         'only FPGA')
    assert snapshot(stack) == before
