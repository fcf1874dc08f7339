"""Hostile requests to the placement stub get a 4xx in Placement's error
format, never a 5xx, and leave every stored object as it was.

Each class of case goes as real HTTP to the stub on a loopback port
(``PlacementFixture``), on SQLite and on
PostgreSQL: nesting, bytes that are not UTF-8, overlong forms and
surrogates, non-ASCII request targets, NUL characters, media types,
``allocation_ratio``, over-long names and malformed consumer ids.
"""

import json
import uuid

import pytest

from placement_stub.fixture import PlacementFixture
from placement_stub import guard
from tests.fixtures import databases
from tests.fixtures import raw_http

LATEST = {'OpenStack-API-Version': 'placement latest', 'X-Roles': 'admin'}
JSON = dict(LATEST, **{'Content-Type': 'application/json'})
DEEP = [b'[' * 50000 + b']' * 50000,
        b'{"a":' * 15000 + b'1' + b'}' * 15000]


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def placement(request):
    """The stub with a provider tree, inventories, traits, an aggregate
    and an allocation: data a bad request could spoil."""
    if request.param == 'postgresql':
        with databases.pg_database() as url:
            with PlacementFixture(connection=url) as fixture:
                yield _seeded(fixture)
    else:
        with PlacementFixture() as fixture:
            yield _seeded(fixture)


def call(placement, method, target, body=None, headers=None):
    data = b'' if body is None else (
        body if isinstance(body, bytes) else json.dumps(body).encode())
    return raw_http.request(placement['url'], method, target,
                            dict(JSON if body is not None else LATEST,
                                 **(headers or {})), data)


def _ok(resp, status=200):
    assert resp.status == status, (resp.status, resp.body[:300])
    return resp.json() if resp.body else None


def _seeded(fixture):
    p = {'url': fixture.endpoint, 'root': str(uuid.uuid4()),
         'consumer': str(uuid.uuid4())}
    rp = _ok(call(p, 'POST', '/resource_providers',
                  {'name': 'hostile-root', 'uuid': p['root']}))
    _ok(call(p, 'PUT', '/resource_providers/%s/inventories' % p['root'], {
        'resource_provider_generation': rp['generation'],
        'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 2.0},
                        'MEMORY_MB': {'total': 4096}}}))
    _ok(call(p, 'PUT', '/traits/CUSTOM_HOSTILE'), 201)
    gen = _ok(call(p, 'GET', '/resource_providers/' + p['root']))[
        'generation']
    _ok(call(p, 'PUT', '/resource_providers/%s/traits' % p['root'], {
        'traits': ['CUSTOM_HOSTILE'], 'resource_provider_generation': gen}))
    gen += 1
    _ok(call(p, 'PUT', '/resource_providers/%s/aggregates' % p['root'], {
        'aggregates': [str(uuid.uuid4())],
        'resource_provider_generation': gen}))
    _ok(call(p, 'PUT', '/resource_classes/CUSTOM_HOSTILE_RC'), 201)
    _ok(call(p, 'PUT', '/allocations/' + p['consumer'], {
        'allocations': {p['root']: {'resources': {'VCPU': 2}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'}), 204)
    return p


def snapshot(p):
    snap = {'providers': _ok(call(p, 'GET', '/resource_providers')),
            'traits': _ok(call(p, 'GET', '/traits')),
            'classes': _ok(call(p, 'GET', '/resource_classes')),
            'consumer': _ok(call(p, 'GET', '/allocations/' + p['consumer'])),
            'usages': _ok(call(p, 'GET', '/usages?project_id=p'))}
    for rp in snap['providers']['resource_providers']:
        for part in ('inventories', 'traits', 'aggregates', 'allocations',
                     'usages'):
            snap[rp['uuid'] + part] = _ok(call(
                p, 'GET', '/resource_providers/%s/%s' % (rp['uuid'], part)))
    return snap


def assert_refused(resp, status, *fragments):
    """``status`` in Placement's error format; returns the detail."""
    assert resp.status == status, (resp.status, resp.body[:300])
    assert resp.headers['content-type'].startswith('application/json')
    error, = resp.json()['errors']
    assert error['status'] == status
    assert error['request_id'].startswith('req-')
    assert error['code'] == 'placement.undefined_code'
    for fragment in fragments:
        assert fragment in error['detail'], (fragment, error)
    return error['detail']


def body_operations(p):
    """(method, path) of every operation that reads a JSON body."""
    rp = '/resource_providers/' + p['root']
    return [('POST', '/resource_providers'), ('PUT', rp),
            ('POST', rp + '/inventories'), ('PUT', rp + '/inventories'),
            ('PUT', rp + '/inventories/VCPU'), ('PUT', rp + '/aggregates'),
            ('PUT', rp + '/traits'), ('POST', '/resource_classes'),
            ('POST', '/allocations'),
            ('PUT', '/allocations/' + p['consumer'])]


def test_deeply_nested_json_is_400(placement):
    """Python's decoder raises RecursionError: Placement answers 500."""
    before = snapshot(placement)
    for method, path in body_operations(placement):
        for body in DEEP:
            resp = call(placement, method, path, body)
            assert_refused(resp, 400, 'nested too deeply')
    assert snapshot(placement) == before


@pytest.mark.parametrize('content_type', [
    'multipart/form-data', 'multipart/form-data; boundary=',
    'application/x-www-form-urlencoded', 'text/plain', 'application/xml'])
def test_bodies_that_are_not_json_are_415(placement, content_type):
    before = snapshot(placement)
    for method, path in body_operations(placement):
        resp = call(placement, method, path, b'{"name": "x"}',
                    {'Content-Type': content_type})
        assert_refused(resp, 415, 'not supported')
    assert snapshot(placement) == before


BAD_ESCAPES = ['%ff', '%c0%af', '%e0%80%af', '%ed%a0%80', '%ed%bf%bf',
               '%f8%88%80%80%80', '%80']


@pytest.mark.parametrize('escape', BAD_ESCAPES)
def test_paths_and_queries_that_are_not_utf8_are_400(placement, escape):
    """Invalid bytes, overlong forms and encoded surrogates: WebOb raised
    UnicodeDecodeError decoding them, a 500."""
    before = snapshot(placement)
    rp = '/resource_providers/' + placement['root']
    for method, target in [
            ('GET', '/resource_providers?name=' + escape),
            ('GET', '/resource_providers/' + escape),
            ('DELETE', '/resource_providers/' + escape),
            ('PUT', '/resource_classes/CUSTOM_' + escape),
            ('DELETE', '/traits/' + escape),
            ('GET', '/traits?name=in:' + escape),
            ('GET', '/allocation_candidates?resources=VCPU:1&required='
             + escape),
            ('GET', '/usages?project_id=' + escape),
            ('GET', rp + '/inventories/' + escape),
            ('DELETE', '/allocations/' + escape),
            ('GET', '/' + escape)]:
        resp = call(placement, method, target)
        assert_refused(resp, 400, 'UTF-8')
    assert snapshot(placement) == before


def test_non_ascii_request_targets(placement):
    """Raw bytes in the request line. A server may refuse them itself
    (waitress does: a 400); where they reach the stub, UTF-8 is read as
    such and anything else is a 400."""
    before = snapshot(placement)
    resp = call(placement, 'GET', b'/resource_providers?name=caf\xc3\xa9')
    if resp.status == 200:
        assert resp.json() == {'resource_providers': []}
    else:
        assert (resp.status, resp.json()['errors'][0]['status']) == (400,
                                                                     400)
    for target, status in [(b'/traits/CUSTOM_\xc3\xa9', 404),
                           ('/\u20ac'.encode(), 404),
                           (b'/resource_providers?name=caf\xe9', 400),
                           (b'/traits/\xff', 400),
                           (b'/resource_classes/\xed\xa0\x80', 400)]:
        resp = call(placement, 'GET', target)
        assert resp.status in (status, 400), resp.body[:300]
        assert resp.json()['errors'][0]['status'] == resp.status
    assert snapshot(placement) == before


@pytest.mark.parametrize('path,query', [
    ('/traits/\xff', ''), ('/traits/CUSTOM_\xc3', ''),
    ('/resource_providers', 'name=\xff'), ('/traits/A\x00', ''),
    ('/usages', 'project_id=%ed%a0%80'), ('/usages', 'a=%00')])
def test_the_guard_refuses_raw_bytes_a_server_passes_on(path, query):
    """What a server that passes raw request-line bytes on (as latin-1,
    PEP 3333) would hand the stub."""
    assert guard.request_error({'PATH_INFO': path, 'QUERY_STRING': query})


def test_the_guard_passes_utf8():
    assert guard.request_error({
        'PATH_INFO': '/traits/CUSTOM_\xc3\xa9',
        'QUERY_STRING': 'name=caf\xc3\xa9&x=%F0%9F%98%80'}) is None


def _nul_bodies(p):
    rp = '/resource_providers/' + p['root']
    allocation = {'allocations': {p['root']: {'resources': {'VCPU': 1}}},
                  'project_id': 'p', 'user_id': 'u',
                  'consumer_generation': None, 'consumer_type': 'INSTANCE'}
    return [
        ('POST', '/resource_providers', {'name': 'a\x00b'}),
        ('PUT', rp, {'name': 'a\x00b'}),
        ('PUT', '/allocations/' + str(uuid.uuid4()),
         dict(allocation, project_id='p\x00')),
        ('PUT', '/allocations/' + str(uuid.uuid4()),
         dict(allocation, user_id='u\x00')),
        ('POST', '/allocations', {str(uuid.uuid4()): dict(
            allocation, project_id='p\x00')}),
        ('PUT', rp + '/traits', {'traits': ['CUSTOM_\x00'],
                                 'resource_provider_generation': 0}),
    ]


def test_nul_characters_are_400_before_the_database(placement):
    """PostgreSQL refuses NUL in text: a NUL in a path, a query or a
    body is refused before any database call, on both databases."""
    before = snapshot(placement)
    rp = '/resource_providers/' + placement['root']
    for method, target in [
            ('GET', '/resource_providers?name=a%00b'),
            ('GET', '/resource_providers?uuid=%00'),
            ('GET', '/resource_providers?required=CUSTOM_A%00'),
            ('GET', '/resource_providers?member_of=%00'),
            ('GET', '/resource_providers?in_tree=a%00'),
            ('GET', '/resource_providers/a%00b'),
            ('DELETE', '/resource_providers/a%00b'),
            ('GET', '/resource_classes/CUSTOM_A%00'),
            ('DELETE', '/resource_classes/CUSTOM_A%00'),
            ('GET', '/traits/CUSTOM_A%00'), ('DELETE', '/traits/A%00'),
            ('GET', '/traits?name=in:A%00'),
            ('GET', '/traits?name=startswith:A%00'),
            ('GET', '/usages?project_id=p%00'),
            ('GET', '/usages?project_id=p&user_id=u%00'),
            ('GET', '/allocation_candidates?resources=VCPU:1&required=A%00'),
            ('GET', '/allocation_candidates?resources=A%00:1'),
            ('GET', '/allocations/a%00b'), ('DELETE', '/allocations/a%00b'),
            ('GET', rp + '/inventories/VCPU%00'),
            ('DELETE', rp + '/inventories/VCPU%00')]:
        assert_refused(call(placement, method, target), 400, 'NUL')
    for method, path, body in _nul_bodies(placement):
        assert_refused(call(placement, method, path, body), 400, 'NUL')
    assert snapshot(placement) == before


def test_unpaired_surrogates_in_bodies_are_400(placement):
    """An escaped surrogate decodes to text UTF-8 cannot encode (a 500
    where it reached the database); raw surrogate bytes are not UTF-8."""
    before = snapshot(placement)
    for method, path, body in _nul_bodies(placement):
        raw = json.dumps(body).replace('\\u0000', '\\ud800').encode()
        assert_refused(call(placement, method, path, raw), 400, 'surrogate')
    assert_refused(call(placement, 'POST', '/resource_providers',
                        b'{"name": "\xed\xa0\x80"}'), 400, 'Malformed JSON')
    assert snapshot(placement) == before


@pytest.mark.parametrize('ratio', [0, 0.0, -1, -0.5])
def test_an_allocation_ratio_of_zero_or_less_is_400(placement, ratio):
    before = snapshot(placement)
    rp = '/resource_providers/' + placement['root']
    gen = before['providers']['resource_providers'][0]['generation']
    for method, path, body in [
            ('PUT', rp + '/inventories', {
                'resource_provider_generation': gen,
                'inventories': {'VCPU': {'total': 8,
                                         'allocation_ratio': ratio}}}),
            ('PUT', rp + '/inventories/VCPU', {
                'resource_provider_generation': gen, 'total': 8,
                'allocation_ratio': ratio}),
            ('POST', rp + '/inventories', {
                'resource_provider_generation': gen, 'total': 1,
                'resource_class': 'DISK_GB', 'allocation_ratio': ratio})]:
        assert_refused(call(placement, method, path, body), 400,
                       'does not validate')
    assert snapshot(placement) == before


def test_a_small_allocation_ratio_is_stored(placement):
    rp = '/resource_providers/' + placement['root']
    gen = _ok(call(placement, 'GET', rp))['generation']
    inv = _ok(call(placement, 'PUT', rp + '/inventories/VCPU', {
        'resource_provider_generation': gen, 'total': 8,
        'allocation_ratio': 0.5}))
    assert inv['allocation_ratio'] == 0.5
    _ok(call(placement, 'PUT', rp + '/inventories/VCPU', {
        'resource_provider_generation': inv['resource_provider_generation'],
        'total': 8, 'allocation_ratio': 2.0}))


def test_long_names_and_malformed_consumers_are_400(placement):
    """What the name and consumer columns cannot hold is refused, as
    Placement refuses it."""
    before = snapshot(placement)
    too_long = 'CUSTOM_' + 'A' * 249
    allocation = {'allocations': {placement['root']: {'resources': {
        'VCPU': 1}}}, 'project_id': 'p', 'user_id': 'u',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'}
    for method, target, body, fragment in [
            ('PUT', '/traits/' + too_long, None, 'no longer than 255'),
            ('PUT', '/traits/CUSTOM_A%0A', None, 'trait is invalid'),
            ('PUT', '/resource_classes/' + too_long, None, 'CUSTOM_'),
            ('PUT', '/allocations/' + 'x' * 300, allocation,
             'Malformed consumer_uuid'),
            ('PUT', '/allocations/not-a-uuid', allocation,
             'Malformed consumer_uuid')]:
        assert_refused(call(placement, method, target, body), 400, fragment)
    assert snapshot(placement) == before
    # Before 1.8 a consumer's project and user are Placement's
    # incomplete-consumer placeholders, whatever the identity headers
    # hold (so an overlong header cannot reach the consumer's columns).
    consumer = str(uuid.uuid4())
    _ok(call(placement, 'PUT', '/allocations/' + consumer, {
        'allocations': [{'resource_provider': {'uuid': placement['root']},
                         'resources': {'VCPU': 1}}]},
        {'OpenStack-API-Version': 'placement 1.0', 'X-Project-Id': 'x' * 256,
         'X-User-Id': 'x' * 256}), 204)
    got = _ok(call(placement, 'GET', '/allocations/' + consumer, None,
                   {'OpenStack-API-Version': 'placement 1.12'}))
    assert got['project_id'] == got['user_id'] == (
        '00000000-0000-0000-0000-000000000000')
    _ok(call(placement, 'DELETE', '/allocations/' + consumer), 204)
    longest = 'CUSTOM_' + 'A' * 248
    _ok(call(placement, 'PUT', '/traits/' + longest), 201)
    _ok(call(placement, 'DELETE', '/traits/' + longest), 204)


@pytest.mark.parametrize('generation', [2 ** 31, 2 ** 64, 3 * 10 ** 23])
def test_a_generation_no_provider_has_is_409(placement, generation):
    """A generation beyond a SQL INTEGER (an overflow in the database's
    driver, a 500, until it was checked first) is stale, as in Placement:
    409, and nothing changes. (``POST .../inventories`` takes a
    generation and, as in Placement, does not compare it.)"""
    before = snapshot(placement)
    rp = '/resource_providers/' + placement['root']
    for method, path, body in [
            ('PUT', rp + '/inventories', {
                'resource_provider_generation': generation,
                'inventories': {'VCPU': {'total': 8}}}),
            ('PUT', rp + '/inventories/VCPU', {
                'resource_provider_generation': generation, 'total': 8}),
            ('PUT', rp + '/traits', {
                'resource_provider_generation': generation,
                'traits': ['CUSTOM_HOSTILE']}),
            ('PUT', rp + '/aggregates', {
                'resource_provider_generation': generation,
                'aggregates': [str(uuid.uuid4())]})]:
        resp = call(placement, method, path, body)
        assert resp.status == 409, (method, path, resp.status, resp.body)
        error, = resp.json()['errors']
        assert error['code'] == 'placement.concurrent_update', error
    assert snapshot(placement) == before


def test_a_limit_beyond_any_number_means_all():
    """A ``limit`` larger than the database takes, with more trees than
    the first slice reads: every candidate, as Placement slices its list
    (it was a 500)."""
    with PlacementFixture() as fixture:
        p = {'url': fixture.endpoint}
        for n in range(40):
            rp = _ok(call(p, 'POST', '/resource_providers',
                          {'name': 'limit-%d' % n}))
            _ok(call(p, 'PUT', '/resource_providers/%s/inventories'
                     % rp['uuid'], {
                         'resource_provider_generation': rp['generation'],
                         'inventories': {'VCPU': {'total': 4}}}))
        for limit in ('1' + '0' * 400, '99999999999999999999999',
                      '2147483648'):
            found = _ok(call(p, 'GET', '/allocation_candidates?resources='
                             'VCPU:1&limit=' + limit))
            assert len(found['allocation_requests']) == 40, limit
