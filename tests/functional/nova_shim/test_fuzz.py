"""schemathesis against nova_shim's live compute API, from the
description it serves at ``/openapi.yaml``.

The compute service runs on libvirt's ``test:///default`` with the
placement stub and the cyborg-lite stack (test_lifecycle_chain's
``Chain``), with servers booted, some with an FPGA.
``tests/fixtures/fuzz.py`` runs schemathesis's examples, coverage and
fuzzing phases on every operation of the description (``/`` and
``/openapi.yaml`` included), each case sent as an admin, as a service
(Cyborg's identity, with a service token's roles) and as a project
member. Every answer is checked: never a 5xx, a documented status,
content type, headers and body that match the description, and a 4xx
for every request that breaks it. Cases are steered
(``tests.fixtures.fuzz.substitute``) towards the servers, flavors
and compute services that exist, and through the microversions.

The quick variant runs always; the long one is marked ``slow`` and runs
when ``-m slow`` selects it::

    .venv/bin/pytest -c tox.ini -m slow tests/functional/nova_shim
"""

import re

import openapi_spec_validator
import pytest
import requests
import yaml

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim.api import app as api  # noqa: E402
from tests.fixtures import fuzz  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa

IDENTITIES = {
    'admin': {'X-Project-Id': 'admin-project', 'X-User-Id': 'admin',
              'X-Roles': 'admin,member,reader'},
    'service': {'X-Project-Id': 'service', 'X-User-Id': 'cyborg',
                'X-Roles': 'service', 'X-Service-Roles': 'service'},
    'member': {'X-Project-Id': 'fuzz-project', 'X-User-Id': 'fuzz-user',
               'X-Roles': 'member,reader'},
}
DP = 'fuzz-fpga'
# Every microversion but a few in between, and some refused ones.
VERSIONS = ['compute 2.%d' % minor for minor in range(1, 97, 5)] + [
    'compute 2.45', 'compute 2.53', 'compute 2.82', 'compute 2.96',
    'compute latest', 'compute 2.97', 'compute 3.0', 'compute two',
    'compute 2.1, placement 1.39']


def _boot(chain, who, name, device_profile=None):
    specs = {'accel:device_profile': device_profile} if device_profile \
        else {}
    resp = requests.post(chain.service.url + '/v2.1/servers', json={
        'server': {'name': name, 'flavor': {
            'vcpus': 1, 'ram': 64, 'disk': 1, 'extra_specs': specs}}},
        headers=IDENTITIES[who], timeout=30)
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('fuzz')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


@pytest.fixture(scope='module')
def steering(chain):
    """Servers of the member's project (one with an FPGA) and of the
    admin's; the steering towards them, the flavors and the services."""
    servers = [_boot(chain, 'member', 'fuzz-fpga', DP),
               _boot(chain, 'member', 'fuzz-plain'),
               _boot(chain, 'admin', 'fuzz-admin')]
    for server in servers:
        chain.wait(server, 'ACTIVE', headers=IDENTITIES['admin'])
    admin = IDENTITIES['admin']
    flavors = [f['id'] for f in requests.get(
        chain.service.url + '/flavors', headers=admin,
        timeout=30).json()['flavors']]
    services = [s['id'] for s in requests.get(
        chain.service.url + '/os-services', headers=admin,
        timeout=30).json()['services']]
    return fuzz.substitute(
        path={'server_id': [fuzz.KEEP] + servers,
              'flavor': [fuzz.KEEP] + flavors,
              'service_id': [fuzz.KEEP] + services + [
                  'enable', 'disable', 'disable-log-reason', 'force-down']},
        headers={'OpenStack-API-Version': fuzz.some_kept(VERSIONS)})


@pytest.fixture(scope='module')
def schema(chain):
    return fuzz.load(chain.service.url + '/openapi.yaml', chain.service.url)


def test_fuzz_quick(schema, steering):
    report = fuzz.run_clean(schema, IDENTITIES, 25, before=steering)
    fuzz.assert_each_served(report, IDENTITIES)


@pytest.mark.slow
def test_fuzz_long(request, schema, steering):
    fuzz.skip_unless_asked(request)
    fuzz.run_clean(schema, IDENTITIES, 100, before=steering)


def test_every_route_is_described(schema):
    """Each route of the route table serves an operation of the
    description, and each operation is served by a route."""
    operations = {(op.ok().method.upper(), op.ok().path)
                  for op in schema.get_all_operations()}
    for method, path in operations:
        concrete = re.sub(r'\{[^}]+\}', 'x', path)
        handler, _args = api.ComputeAPI._route(method, concrete)
        assert handler is not None, (method, path)
    for method, pattern, handler in api.ROUTES:
        assert any(m == method and pattern.match(re.sub(
            r'\{[^}]+\}', 'x', path)) for m, path in operations), (
            method, pattern.pattern, handler.__name__)


def test_served_description_is_valid_openapi(chain):
    """Served without credentials, as YAML, and valid OpenAPI 3.1."""
    resp = requests.get(chain.service.url + '/openapi.yaml', timeout=30)
    assert resp.status_code == 200, resp.text
    assert resp.headers['Content-Type'].startswith('application/yaml')
    document = yaml.safe_load(resp.content)
    openapi_spec_validator.validate(document)
    assert document['openapi'].startswith('3.1')
