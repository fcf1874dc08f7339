"""Placement failing behind the conductor: the API answers 503 and the
database keeps agreeing with Placement.

The stack's Placement is the placement stub behind
``tests.fixtures.placement_proxy.PlacementProxy``, which the tests
turn down (503, as a balancer with no backend) and up again.
"""

import threading
import time

import pytest
from oslo_utils import uuidutils

from placement_stub import fixture as placement_fixture
from tests.fixtures import cyborg_api
from tests.fixtures import placement_proxy


@pytest.fixture(scope='module')
def proxy():
    with placement_fixture.PlacementFixture() as placement:
        proxy = placement_proxy.PlacementProxy(placement.endpoint)
        with placement_proxy.serve(proxy) as url:
            proxy.endpoint = url
            yield proxy


@pytest.fixture(scope='module')
def stack(tmp_path_factory, proxy):
    overrides = {('placement', 'auth_type'): 'none',
                 ('placement', 'endpoint_override'): proxy.endpoint}
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack'),
                                overrides=overrides) as s:
        yield s


def _reserved(proxy, rp_uuid):
    inventories = proxy.session.get(
        '%s/resource_providers/%s/inventories' % (proxy.url, rp_uuid),
        headers={'OpenStack-API-Version': 'placement 1.26'},
        timeout=10).json()['inventories']
    return {rc: inv['reserved'] for rc, inv in inventories.items()}


def test_a_disable_placement_refuses_leaves_the_device_enabled(stack,
                                                               proxy):
    admin = stack.client(cyborg_api.ADMIN, version='2.3')
    device = admin.get('/devices?type=FPGA').json()['devices'][0]
    dep = [d for d in admin.get('/deployables').json()['deployables']
           if '"FPGA"' in d['attributes_list']][0]
    assert _reserved(proxy, dep['rp_uuid']) == {'FPGA': 0}
    proxy.down = True
    try:
        resp = admin.post('/devices/%s/disable' % device['uuid'])
        assert resp.status_code == 503, resp.text
        assert 'the status stays enabled' in resp.text
        assert admin.get('/devices/' + device['uuid']).json()[
            'status'] == 'enabled'
    finally:
        proxy.down = False
    assert _reserved(proxy, dep['rp_uuid']) == {'FPGA': 0}
    resp = admin.post('/devices/%s/disable' % device['uuid'])
    assert resp.status_code == 200, resp.text
    assert admin.get('/devices/' + device['uuid']).json()[
        'status'] == 'maintaining'
    assert _reserved(proxy, dep['rp_uuid']) == {
        'FPGA': dep['num_accelerators']}
    assert admin.post('/devices/%s/enable'
                      % device['uuid']).status_code == 200


def test_reads_never_wait_for_a_disable_that_waits_on_placement(stack,
                                                                 proxy):
    """A disable waits for Placement in its conductor call; the calls
    queued up in the API meanwhile travel in messages of their own
    rather than in the disable's, whose answer waits for Placement."""
    admin = stack.client(cyborg_api.ADMIN, version='2.3')
    device = admin.get('/devices?type=FPGA').json()['devices'][0]
    dep = [d for d in admin.get('/deployables').json()['deployables']
           if '"FPGA"' in d['attributes_list']][0]
    stop = threading.Event()
    reads = []          # seconds each read took
    reading = {}        # reader: when its read in progress started

    def read(n):
        client = stack.client(cyborg_api.ADMIN, version='2.3')
        while not stop.is_set():
            reading[n] = time.monotonic()
            resp = client.get('/accelerator_requests?instance=' +
                              uuidutils.generate_uuid())
            reads.append(time.monotonic() - reading.pop(n))
            assert resp.status_code == 200, resp.text

    readers = [threading.Thread(target=read, args=(n,), daemon=True)
               for n in range(6)]
    for t in readers:
        t.start()
    proxy.hold(dep['rp_uuid'])
    disabled = []
    disable = threading.Thread(target=lambda: disabled.append(admin.post(
        '/devices/%s/disable' % device['uuid'])), daemon=True)
    try:
        disable.start()
        assert proxy.paused.wait(10)
        del reads[:]
        time.sleep(1.5)      # Placement holds the disable meanwhile
        now = time.monotonic()
        waiting = [now - started for started in list(reading.values())]
        done = list(reads)
        assert disable.is_alive()
    finally:
        proxy.go.set()
        stop.set()
    for t in readers + [disable]:
        t.join(30)
        assert not t.is_alive()
    assert len(done) > 10
    assert max(done + waiting) < 1.0, (max(done), waiting)
    assert disabled[0].status_code == 200, disabled[0].text
    resp = admin.post('/devices/%s/enable' % device['uuid'])
    assert resp.status_code == 200, resp.text
