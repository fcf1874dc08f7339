"""Builds that fail on the accelerator side clean up after themselves.

A bind that Cyborg refuses (no free attach handle), a bind that never
finishes within ``arq_binding_timeout`` (an FPGA programming that hangs),
and one that ends BindFailed (programming fails: a ``failed`` event):
each leaves the server in ERROR with no ARQs and no allocation.
"""

import time
import uuid

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from tests.fixtures import cyborg_api  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import FPGA_HANDLES  # noqa

DP = 'failures-fpga'


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('chain')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    chain.create_profile('slow-fpga', {'resources:FPGA': '1',
                                       'accel:bitstream_id': 'slow-1'})
    chain.create_profile('bad-fpga', {'resources:FPGA': '1',
                                      'accel:bitstream_id': 'bad-1'})
    try:
        yield chain
    finally:
        chain.stop()


def assert_cleaned_up(chain, server_id, reason):
    server = chain.wait(server_id, 'ERROR')
    assert reason in server['fault']['message']
    assert server['hostdevs'] == []
    assert chain.allocations(server_id) == {}
    deadline = time.monotonic() + 10
    while chain.cyborg_arqs(server_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert chain.cyborg_arqs(server_id) == []
    # As in Nova: the failed build left no host, so the actions that need
    # one are 409 "not ready" (not a 404 for the missing domain, or a 500
    # for the missing ARQs); delete works.
    assert server['OS-EXT-SRV-ATTR:host'] is None
    for body in ({'os-stop': None}, {'reboot': {'type': 'HARD'}},
                 {'rebuild': {'imageRef': 'any'}}):
        resp = chain.api('POST', '/servers/%s/action' % server_id,
                         json=body)
        assert resp.status_code == 409, (body, resp.text)
        assert 'is not ready' in resp.json()['conflictingRequest'][
            'message']
    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204


def test_conductor_events_reach_the_compute_api(chain):
    server_id = chain.boot('evented', DP)
    server = chain.wait(server_id, 'ACTIVE')
    arq = server['accelerator_requests'][0]['uuid']
    notifier = chain.stack.aio.conductor.notifier
    notifier.drain()
    sent = [(event, status) for events, status in notifier.sent
            for event in events if event['tag'] == arq]
    assert sent == [({'name': 'accelerator-request-bound',
                      'server_uuid': server_id, 'tag': arq,
                      'status': 'completed'}, 200)]
    chain.api('DELETE', '/servers/' + server_id)


def test_bind_failure_deletes_arqs_and_frees_the_allocation(chain):
    # Take every attach handle behind Placement's back: Placement still
    # offers the FPGA, Cyborg has none left to bind.
    rp_uuid = chain.stack.deployable('FPGA')['rp_uuid']
    blocker = str(uuid.uuid4())
    arqs = [chain.cyborg.post('/accelerator_requests', json={
        'device_profile_name': DP}).json()['arqs'][0]['uuid']
        for _ in range(FPGA_HANDLES)]
    resp = chain.cyborg.patch('/accelerator_requests', json=cyborg_api
                              .bind_patch(arqs, chain.stack.aio.hostnames[0],
                                          rp_uuid, blocker))
    assert resp.status_code == 202, resp.text
    try:
        server_id = chain.boot('unlucky', DP)
        assert_cleaned_up(chain, server_id, 'Failed to bind')
    finally:
        chain.cyborg.delete('/accelerator_requests',
                            params={'instance': blocker})
    server_id = chain.boot('lucky', DP)
    chain.wait(server_id, 'ACTIVE')
    chain.api('DELETE', '/servers/' + server_id)


def test_bind_event_timeout(chain):
    chain.conf.set_override('arq_binding_timeout', 1)
    try:
        server_id = chain.boot('slow', 'slow-fpga')
        assert_cleaned_up(chain, server_id, 'Timed out waiting')
    finally:
        chain.conf.clear_override('arq_binding_timeout')


def test_failed_bind_event_fails_the_build(chain):
    server_id = chain.boot('bad', 'bad-fpga')
    assert_cleaned_up(chain, server_id, 'Binding failed')


def test_no_valid_host(chain):
    server_id = chain.boot('huge', DP, vcpus=4096)
    assert_cleaned_up(chain, server_id, 'No valid host')
