"""A boot's log lines name its request, across the services.

nova_shim's API gives each request an id (``X-OpenStack-Request-ID``,
and Nova's ``X-Compute-Request-Id``); the build thread keeps the
request's context, so its lines name the request, and the Cyborg calls
it makes send that id, which cyborg-lite's lines name as their global
request id, as Nova's and Cyborg's logs do.
"""

import uuid

import pytest

from tests.fixtures import log_lines
from tests.functional.nova_shim.test_lifecycle_chain import Chain
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS

DP = 'dp-logs'


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('chain')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


def test_a_boot_is_traced_by_its_request_id(chain):
    global_id = 'req-%s' % uuid.uuid4()
    with log_lines.captured('nova_shim.compute',
                            'cyborg_lite.conductor') as lines:
        resp = chain.api('POST', '/servers', headers=dict(
            HEADERS, **{'X-OpenStack-Request-ID': global_id}),
            json={'server': {'name': 'vm', 'flavor': {
                'name': 'f-logs', 'vcpus': 1, 'ram': 256, 'disk': 1,
                'extra_specs': {'accel:device_profile': DP}}}})
        assert resp.status_code == 202, resp.text
        server_id = resp.json()['server']['id']
        chain.wait(server_id, 'ACTIVE')
    request_id = resp.headers['X-OpenStack-Request-ID']
    assert resp.headers['X-Compute-Request-Id'] == request_id
    [built] = [line for line in lines
               if 'instance %s: built' % server_id in line]
    assert log_lines.context_part(global_id, request_id, 'u-demo',
                                  'p-demo') in built, built
    # The bind that the build asked cyborg-lite for: Nova's request id
    # is its global request id.
    bound = [line for line in lines
             if 'cyborg_lite.conductor' in line and '-> Bound' in line]
    assert bound, lines
    assert all('[%s req-' % request_id in line for line in bound), bound
    chain.api('DELETE', '/servers/' + server_id)
