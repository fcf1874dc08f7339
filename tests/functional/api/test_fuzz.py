"""schemathesis against the live API, from the description it serves.

``tests/fixtures/fuzz.py`` loads ``/v2/openapi.yaml`` from a running
stack and runs schemathesis's examples, coverage and fuzzing phases on
every operation in it (``/`` and ``/v2/openapi.yaml`` included), each
case sent as a service (admin with a service token), as an admin and as
a project member. Every answer is checked: never a 5xx, a documented
status, content type, headers and body that match the description, and
a 4xx for every request that breaks the schema. Cases are steered
(``tests.fixtures.fuzz.substitute``) towards the stored profiles,
ARQs, deployables, devices and attributes, and through the
microversions, so that they reach more than 404s.

The quick variant runs always; the long one is marked ``slow`` and runs
when ``-m slow`` selects it::

    .venv/bin/pytest -c tox.ini tests/functional/api/test_fuzz.py -m slow
"""

import pytest

from tests.fixtures import cyborg_api
from tests.fixtures import fuzz
from tests.functional.api import helpers

MEMBER = cyborg_api.member('fuzz-project')
IDENTITIES = {'service': cyborg_api.SERVICE, 'admin': cyborg_api.ADMIN,
              'member': MEMBER}


# Every microversion, in each form, and some that are refused (406).
VERSIONS = ['accelerator 2.0', 'accelerator 2.1', 'accelerator 2.2',
            'accelerator 2.3', '2.2', 'latest', 'accelerator 2.4',
            'accelerator 3.0', 'compute 2.1']


@pytest.fixture(scope='module')
def seeded(stack):
    """Some data in the stack (profiles, the admin's and the member's
    ARQs; its deployables, devices and attributes) for lookups, updates
    and deletes to hit; returns the steering towards it and through the
    microversions."""
    admin = stack.client(cyborg_api.ADMIN)
    member = stack.client(MEMBER)
    profiles, arqs = [], []
    for rc in ('FPGA', 'GPU'):
        dp = helpers.create_profile(admin, [{'resources:%s' % rc: '1'}])
        profiles += [dp['name'], dp['uuid']]
        arqs += [arq['uuid'] for arq in helpers.create_arqs(admin, dp['name'])]
        arqs += [arq['uuid'] for arq in
                 helpers.create_arqs(member, dp['name'])]
    deployables = [d['uuid'] for d in
                   admin.get('/deployables').json()['deployables']]
    devices = [d['uuid'] for d in admin.get('/devices').json()['devices']]
    attributes = [a['uuid'] for a in
                  admin.get('/attributes').json()['attributes']]
    return fuzz.substitute(
        path={'ident': [fuzz.KEEP] + profiles,
              'arq_uuid': [fuzz.KEEP] + arqs,
              'deployable_uuid': [fuzz.KEEP] + deployables,
              'device_uuid': [fuzz.KEEP] + devices,
              'attribute_uuid': [fuzz.KEEP] + attributes},
        headers={'OpenStack-API-Version': fuzz.some_kept(VERSIONS)})


@pytest.fixture(scope='module')
def schema(stack):
    return fuzz.load(stack.url + '/v2/openapi.yaml', stack.url)


def test_fuzz_quick(schema, seeded):
    report = fuzz.run_clean(schema, IDENTITIES, 25, before=seeded)
    fuzz.assert_each_served(report, IDENTITIES)


@pytest.mark.slow
def test_fuzz_long(request, schema, seeded):
    fuzz.skip_unless_asked(request)
    fuzz.run_clean(schema, IDENTITIES, 250, before=seeded)


def test_every_operation_is_fuzzed(schema):
    labels = {op.ok().label for op in schema.get_all_operations()}
    expected = {'%s %s' % (method.upper(), path)
                for path, item in schema.raw_schema['paths'].items()
                for method in item if method in ('get', 'post', 'put',
                                                 'patch', 'delete')}
    assert labels == expected
    assert {'GET /', 'GET /v2', 'GET /v2/openapi.yaml'} <= labels
