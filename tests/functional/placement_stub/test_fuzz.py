"""schemathesis against the live placement stub, from the description it
serves at ``/openapi.yaml``.

``tests/fixtures/fuzz.py`` runs schemathesis's examples, coverage and
fuzzing phases on every operation of the description (``/`` and
``/openapi.yaml`` included), each case sent as an admin, as a caller with
the ``service`` role and as a project member (a reader, whom policy
refuses everything but its project's usages). Every answer is checked:
never a 5xx, a documented status, content type, headers and body that
match the description, and a 4xx for every request that breaks it.

Cases are steered (``tests.fixtures.fuzz.substitute``) towards the
stored providers, classes, traits and consumer, and through every
microversion from 1.0 to 1.39, so that they reach more than 404s.

The quick variant runs always; the long one is marked ``slow`` and runs
when ``-m slow`` selects it::

    .venv/bin/pytest -c tox.ini -m slow tests/functional/placement_stub
"""

import json
import urllib.request
import uuid

import openapi_spec_validator
import pytest
import requests
import yaml

from placement_stub import handler
from placement_stub import microversion
from placement_stub.fixture import PlacementFixture
from tests.fixtures import fuzz

IDENTITIES = {
    'admin': {'X-Roles': 'admin', 'X-Project-Id': 'admin-project',
              'X-User-Id': 'admin'},
    'service': {'X-Roles': 'service', 'X-Project-Id': 'service-project',
                'X-User-Id': 'nova'},
    'member': {'X-Roles': 'member,reader', 'X-Project-Id': 'fuzz-project',
               'X-User-Id': 'fuzz-user'},
}
ROOT = str(uuid.UUID(int=1))
CHILD = str(uuid.UUID(int=2))
CONSUMER = str(uuid.UUID(int=3))
# Every microversion, and some that are refused: out of range (406),
# not a version (400).
VERSIONS = ['placement %s' % v for v in microversion.VERSIONS] + [
    'placement latest', 'placement 1.40', 'placement 2.0', 'placement one']


def _steering():
    return fuzz.substitute(
        path={'uuid': [fuzz.KEEP, ROOT, CHILD],
              'resource_class': [fuzz.KEEP, 'VCPU', 'CUSTOM_FUZZ_RC'],
              'name': [fuzz.KEEP, 'CUSTOM_FUZZ', 'CUSTOM_FUZZ_RC',
                       'HW_CPU_X86_AVX', 'VCPU'],
              'consumer_uuid': [fuzz.KEEP, CONSUMER]},
        query={'project_id': [fuzz.KEEP, 'fuzz-project']},
        headers={'OpenStack-API-Version': fuzz.some_kept(VERSIONS)})


def _call(url, method, path, body=None):
    headers = dict(IDENTITIES['admin'], **{
        'OpenStack-API-Version': 'placement latest',
        'Content-Type': 'application/json'})
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data, headers,
                                     method=method)
    with urllib.request.urlopen(request, timeout=30) as resp:
        return json.loads(resp.read() or 'null')


def _seed(url):
    """A provider tree with inventories, traits, an aggregate, a custom
    class and the member project's allocation."""
    _call(url, 'PUT', '/resource_classes/CUSTOM_FUZZ_RC')
    _call(url, 'PUT', '/traits/CUSTOM_FUZZ')
    root = _call(url, 'POST', '/resource_providers',
                 {'name': 'fuzz-root', 'uuid': ROOT})
    _call(url, 'POST', '/resource_providers',
          {'name': 'fuzz-child', 'uuid': CHILD,
           'parent_provider_uuid': ROOT})
    gen = _call(url, 'PUT', '/resource_providers/%s/inventories' % ROOT, {
        'resource_provider_generation': root['generation'],
        'inventories': {'VCPU': {'total': 16, 'allocation_ratio': 2.0},
                        'MEMORY_MB': {'total': 8192},
                        'CUSTOM_FUZZ_RC': {'total': 4}}},
    )['resource_provider_generation']
    gen = _call(url, 'PUT', '/resource_providers/%s/traits' % ROOT, {
        'traits': ['CUSTOM_FUZZ', 'HW_CPU_X86_AVX'],
        'resource_provider_generation': gen})['resource_provider_generation']
    _call(url, 'PUT', '/resource_providers/%s/aggregates' % ROOT, {
        'aggregates': [str(uuid.UUID(int=4))],
        'resource_provider_generation': gen})
    _call(url, 'PUT', '/allocations/' + CONSUMER, {
        'allocations': {ROOT: {'resources': {'VCPU': 2, 'MEMORY_MB': 512}}},
        'project_id': 'fuzz-project', 'user_id': 'fuzz-user',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})


@pytest.fixture(scope='module')
def placement():
    with PlacementFixture() as fixture:
        _seed(fixture.endpoint)
        yield fixture


@pytest.fixture(scope='module')
def schema(placement):
    return fuzz.load(placement.endpoint + '/openapi.yaml',
                     placement.endpoint)


def test_fuzz_quick(schema):
    report = fuzz.run_clean(schema, IDENTITIES, 25, before=_steering())
    fuzz.assert_each_served(report, IDENTITIES)


@pytest.mark.slow
def test_fuzz_long(request, schema):
    fuzz.skip_unless_asked(request)
    fuzz.run_clean(schema, IDENTITIES, 100, before=_steering())


def test_every_route_is_described(schema):
    """Every method of every path of the route table is an operation of
    the description, and the description has no other."""
    labels = {op.ok().label for op in schema.get_all_operations()}
    routes = {'%s %s' % (method, path)
              for path, methods in handler.ROUTE_DECLARATIONS
              for method in methods}
    assert labels == routes | {'GET /openapi.yaml'}


def test_served_description_is_valid_openapi(placement):
    """Served without credentials, as YAML, and valid OpenAPI 3.1."""
    resp = requests.get(placement.endpoint + '/openapi.yaml', timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.headers['Content-Type'].startswith('application/yaml')
    document = yaml.safe_load(resp.content)
    openapi_spec_validator.validate(document)
    assert document['openapi'].startswith('3.1')


def test_uuids_come_back_as_given(placement, schema):
    """Placement keeps an aggregate's uuid as it was given (dashes and
    case as sent) and answers with it; the description's answers allow
    what its requests allow."""
    given = ['3C9a494b9F009fAA-f6b6-51B2bd645b4a', uuid.UUID(int=5).hex]
    provider = str(uuid.uuid4())
    headers = dict(IDENTITIES['admin'],
                   **{'OpenStack-API-Version': 'placement latest'})
    created = requests.post(
        placement.endpoint + '/resource_providers', headers=headers,
        json={'name': 'as-given', 'uuid': provider}, timeout=30)
    assert created.status_code == 200, created.text
    url = placement.endpoint + '/resource_providers/%s' % provider
    operations = schema['/resource_providers/{uuid}/aggregates']
    try:
        put = requests.put(url + '/aggregates', headers=headers, timeout=30,
                           json={'aggregates': given,
                                 'resource_provider_generation':
                                     created.json()['generation']})
        assert put.status_code == 200, put.text
        get = requests.get(url + '/aggregates', headers=headers, timeout=30)
        assert sorted(get.json()['aggregates']) == sorted(given)
        operations['PUT'].validate_response(put)
        operations['GET'].validate_response(get)
    finally:
        requests.delete(url, headers=headers, timeout=30).raise_for_status()
