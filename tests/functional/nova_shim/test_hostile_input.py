"""Hostile requests to nova_shim's compute API get a 4xx in Nova's error
body, never a 5xx, and leave the instances as they were.

Each class of case goes as real HTTP to the compute service's API (the
service with libvirt's ``test:///default`` and the placement stub), on
SQLite and on PostgreSQL: multipart and other media types, empty ids,
NUL characters, nesting, bytes that are not UTF-8, overlong forms and
surrogates, non-ASCII request targets, unknown methods, and names and
identity headers longer than their columns.
"""

import json
import time
import uuid

import pytest

pytest.importorskip('libvirt')

from nova_shim.service import ComputeService  # noqa: E402
from nova_shim.api import http  # noqa: E402
from nova_shim import conf as shim_conf  # noqa: E402
from placement_stub.fixture import PlacementFixture  # noqa: E402
from tests.fixtures import databases  # noqa: E402
from tests.fixtures import raw_http  # noqa: E402

HEADERS = {'X-Project-Id': 'p-hostile', 'X-User-Id': 'u-hostile',
           'X-Roles': 'member,reader'}
JSON = dict(HEADERS, **{'Content-Type': 'application/json'})
FLAVOR = {'vcpus': 1, 'ram': 64, 'disk': 1}
DEEP = [b'[' * 50000 + b']' * 50000,
        b'{"a":' * 15000 + b'1' + b'}' * 15000]


def _start(tmp_path, db_url):
    placement = PlacementFixture().start()
    overrides = {
        (None, 'state_path'): str(tmp_path),
        (None, 'host'): 'hostile-compute',
        ('api', 'auth_strategy'): 'noauth2',
        ('database', 'sync_on_startup'): True,
        ('compute', 'hypervisor_hostnames'): ['hostile-node'],
        ('compute', 'api_port'): 0,
        ('placement', 'auth_type'): 'none',
        ('placement', 'endpoint_override'): placement.endpoint,
        ('cyborg', 'auth_type'): 'none'}
    if db_url:
        overrides[('database', 'connection')] = db_url
    service = ComputeService(shim_conf.build_conf(overrides=overrides))
    try:
        service.start()
    except Exception:
        placement.stop()
        raise
    return placement, service


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def compute(request, tmp_path_factory):
    """The compute API with one running guest (no accelerators)."""
    tmp = tmp_path_factory.mktemp('compute-' + request.param)
    if request.param == 'postgresql':
        with databases.pg_database() as url:
            yield from _serve(tmp, url)
    else:
        yield from _serve(tmp, None)


def _serve(tmp, db_url):
    placement, service = _start(tmp, db_url)
    try:
        resp = call(service.url, 'POST', '/v2.1/servers', {'server': {
            'name': 'hostile-vm', 'flavor': FLAVOR}})
        assert resp.status == 202, resp.body[:300]
        server = resp.json()['server']['id']
        deadline = time.monotonic() + 20
        while show(service.url, server)['status'] != 'ACTIVE':
            assert time.monotonic() < deadline, show(service.url, server)
            time.sleep(0.05)
        yield {'url': service.url, 'server': server}
    finally:
        service.stop()
        placement.stop()


def call(url, method, target, body=None, headers=None):
    """A request as the project's member; events as Cyborg sends them,
    with the service role."""
    data = b'' if body is None else (
        body if isinstance(body, bytes) else json.dumps(body).encode())
    base = dict(JSON if body is not None else HEADERS)
    path = target.decode('latin-1') if isinstance(target, bytes) else target
    if 'os-server-external-events' in path:
        base['X-Roles'] = 'service'
    return raw_http.request(url, method, target,
                            dict(base, **(headers or {})), data)


def show(url, server):
    resp = call(url, 'GET', '/v2.1/servers/' + server)
    assert resp.status == 200, resp.body[:300]
    return resp.json()['server']


def snapshot(compute):
    resp = call(compute['url'], 'GET', '/v2.1/servers/detail')
    assert resp.status == 200, resp.body[:300]
    servers = resp.json()['servers']
    assert compute['server'] in [s['id'] for s in servers]
    return servers


def assert_refused(resp, status, key, *fragments):
    """``status`` in Nova's error body ``{key: {code, message}}``."""
    assert resp.status == status, (resp.status, resp.body[:300])
    assert resp.headers['content-type'].startswith('application/json')
    body = resp.json()
    assert list(body) == [key], body
    assert body[key]['code'] == status
    for fragment in fragments:
        assert fragment in body[key]['message'], (fragment, body)
    return body[key]['message']


def operations(compute):
    server = compute['server']
    return [('GET', '/v2.1/servers'), ('POST', '/v2.1/servers'),
            ('GET', '/v2.1/servers/detail'),
            ('GET', '/v2.1/servers/' + server),
            ('DELETE', '/v2.1/servers/' + str(uuid.uuid4())),
            ('POST', '/v2.1/servers/%s/action' % server),
            ('POST', '/v2.1/os-server-external-events'),
            ('GET', '/v2.1/flavors'), ('GET', '/v2.1/flavors/detail'),
            ('GET', '/v2.1/'), ('GET', '/servers')]


@pytest.mark.parametrize('content_type', [
    'multipart/form-data', 'multipart/form-data; boundary=',
    'multipart/form-data; boundary="x', 'application/x-www-form-urlencoded',
    'application/xml', 'text/html', 'application/octet-stream'])
def test_media_types_nova_does_not_read_are_415(compute, content_type):
    """As Nova: only JSON types, text/plain and no type are read."""
    before = snapshot(compute)
    for method, path in operations(compute):
        resp = call(compute['url'], method, path,
                    b'{"server": {"name": "typed", "flavor": {"vcpus": 1, '
                    b'"ram": 64, "disk": 1}}}',
                    {'Content-Type': content_type})
        assert_refused(resp, 415, 'badMediaType', 'Unsupported Content-Type')
    assert snapshot(compute) == before


def test_text_plain_is_read_as_json_as_nova_does(compute):
    resp = call(compute['url'], 'POST',
                '/v2.1/servers/%s/action' % compute['server'],
                b'{"no-such-action": null}', {'Content-Type': 'text/plain'})
    assert_refused(resp, 400, 'badRequest', 'no such action')


@pytest.mark.parametrize('target', [
    '/v2.1/servers/', '/v2.1/servers//', '/v2.1/servers/%2F',
    '/v2.1/servers//action', '/v2.1/servers/%2F/action', '/v2.1/flavors/',
    '/v2.1/flavors//', '/servers//action'])
def test_empty_ids_are_404(compute, target):
    before = snapshot(compute)
    for method in ('GET', 'POST', 'DELETE', 'PUT'):
        resp = call(compute['url'], method, target, {'os-stop': None})
        assert_refused(resp, 404, 'itemNotFound')
    assert snapshot(compute) == before


def test_methods_a_path_does_not_serve_are_405_with_allow(compute):
    before = snapshot(compute)
    server = compute['server']
    for path, allow in [('/v2.1/servers', 'GET, POST'),
                        ('/v2.1/servers/' + server, 'GET, DELETE'),
                        ('/v2.1/servers/%s/action' % server, 'POST'),
                        ('/v2.1/os-server-external-events', 'POST')]:
        for method in ('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS',
                       'FOO'):
            if method in allow:
                continue
            resp = call(compute['url'], method, path, {})
            assert_refused(resp, 405, 'badMethod')
            assert resp.headers['allow'] == allow
    assert snapshot(compute) == before


def test_nul_characters_are_400_before_the_database(compute):
    """PostgreSQL refuses NUL in text: in a path, a query or a body, a
    NUL is refused before any database call, on both databases."""
    before = snapshot(compute)
    url, server = compute['url'], compute['server']
    for method, target in [('GET', '/v2.1/servers/a%00b'),
                           ('DELETE', '/v2.1/servers/%s%%00' % server),
                           ('POST', '/v2.1/servers/%00/action'),
                           ('GET', '/v2.1/flavors/%00'),
                           ('GET', '/v2.1/servers?name=a%00b'),
                           ('GET', '/v2.1/servers%00')]:
        assert_refused(call(url, method, target, {'os-stop': None}), 400,
                       'badRequest', 'NUL')
    for path, body in [
            ('/v2.1/servers', {'server': {'name': 'a\x00b',
                                          'flavor': FLAVOR}}),
            ('/v2.1/servers', {'server': {'name': 'n', 'flavor': dict(
                FLAVOR, extra_specs={'k\x00': 'v'})}}),
            ('/v2.1/servers', {'server': {'name': 'n', 'flavorRef': '\x00'}}),
            ('/v2.1/servers/%s/action' % server, {'reboot': {
                'type': 'HARD\x00'}}),
            ('/v2.1/os-server-external-events', {'events': [
                {'name': 'network-changed', 'server_uuid': 'a\x00b'}]})]:
        assert_refused(call(url, 'POST', path, body), 400, 'badRequest',
                       'NUL')
    assert snapshot(compute) == before


def test_unpaired_surrogates_in_bodies_are_400(compute):
    before = snapshot(compute)
    url = compute['url']
    for path, raw in [
            ('/v2.1/servers', b'{"server": {"name": "\\ud800", "flavor": '
                              b'{"vcpus": 1, "ram": 64, "disk": 1}}}'),
            ('/v2.1/os-server-external-events',
             b'{"events": [{"name": "network-changed", '
             b'"server_uuid": "\\udfff"}]}')]:
        assert_refused(call(url, 'POST', path, raw), 400, 'badRequest',
                       'surrogate')
    assert_refused(call(url, 'POST', '/v2.1/servers',
                        b'{"server": {"name": "\xed\xa0\x80"}}'), 400,
                   'badRequest', 'malformed JSON')
    assert snapshot(compute) == before


def test_deeply_nested_json_is_400(compute):
    before = snapshot(compute)
    for method, path in operations(compute):
        if method != 'POST':
            continue
        for body in DEEP:
            resp = call(compute['url'], method, path, body)
            assert_refused(resp, 400, 'badRequest', 'nested too deeply')
    assert snapshot(compute) == before


@pytest.mark.parametrize('escape', ['%ff', '%c0%af', '%e0%80%af',
                                    '%ed%a0%80', '%f8%88%80%80%80', '%80'])
def test_paths_and_queries_that_are_not_utf8_are_400(compute, escape):
    before = snapshot(compute)
    for method, target in [('GET', '/v2.1/servers/' + escape),
                           ('DELETE', '/v2.1/servers/' + escape),
                           ('POST', '/v2.1/servers/%s/action' % escape),
                           ('GET', '/v2.1/flavors/' + escape),
                           ('GET', '/v2.1/servers?name=' + escape),
                           ('GET', '/' + escape)]:
        resp = call(compute['url'], method, target, {'os-stop': None})
        assert_refused(resp, 400, 'badRequest', 'UTF-8')
    assert snapshot(compute) == before


def test_non_ascii_request_targets(compute):
    """Raw bytes in the request line. A server may refuse them itself;
    where they reach the API, UTF-8 is read as such and anything else is
    a 400."""
    before = snapshot(compute)
    for target, status in [(b'/v2.1/servers/caf\xc3\xa9', 404),
                           ('/v2.1/\u20ac'.encode(), 404),
                           (b'/v2.1/servers/\xff', 400),
                           (b'/v2.1/servers?name=\xed\xa0\x80', 400)]:
        resp = call(compute['url'], 'GET', target)
        assert resp.status in (status, 400), resp.body[:300]
        body = resp.json()
        assert [value['code'] for value in body.values()] == [resp.status]
    assert snapshot(compute) == before


@pytest.mark.parametrize('raw', [b'/servers/\xff', b'/servers/caf\xc3',
                                 b'/servers/a\x00b'])
def test_the_checks_refuse_raw_bytes_a_server_passes_on(raw):
    """What a server that passes raw request-line bytes on (as latin-1,
    PEP 3333) would hand the API."""
    resp = http.request_error({'PATH_INFO': raw.decode('latin-1')})
    assert resp.status_int == 400
    assert resp.json['badRequest']['code'] == 400


def test_names_and_identities_longer_than_their_columns_are_400(compute):
    before = snapshot(compute)
    url = compute['url']
    assert_refused(call(url, 'POST', '/v2.1/servers', {'server': {
        'name': 'n' * 256, 'flavor': FLAVOR}}), 400, 'badRequest', '255')
    for header in ('X-Project-Id', 'X-User-Id', 'X-Tenant-Id'):
        headers = {header: 'x' * 256}
        if header == 'X-Tenant-Id':
            headers['X-Project-Id'] = None
        resp = raw_http.request(
            url, 'POST', '/v2.1/servers',
            {k: v for k, v in dict(JSON, **headers).items() if v},
            json.dumps({'server': {'name': 'n', 'flavor': FLAVOR}}).encode())
        assert_refused(resp, 400, 'badRequest', header)
    assert snapshot(compute) == before
    resp = call(url, 'POST', '/v2.1/servers', {'server': {
        'name': 'n' * 255, 'flavor': FLAVOR}})
    assert resp.status == 202, resp.body[:300]
    server = resp.json()['server']['id']
    deadline = time.monotonic() + 20
    while show(url, server)['status'] == 'BUILD':
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert show(url, server)['name'] == 'n' * 255
    assert call(url, 'DELETE', '/v2.1/servers/' + server).status == 204
