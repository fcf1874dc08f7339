"""A delete while another operation runs on the instance cleans up all
that operation made, as Nova's lock per instance ensures.

The operation is held at one point (the build as it creates the ARQs,
a start as it has fetched them) while the DELETE comes in; then it goes
on. Whatever the order, the instance is gone with its guest, its ARQs
(so its attach handles) and its allocation. The holds wrap the real
calls: every call still reaches the real Cyborg, Placement and libvirt.
"""

import threading
import time

import pytest

from nova_shim.accelerator import cyborg
from nova_shim.compute import accelerators
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa

PROFILE = 'race-fpga'


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('races')).start()
    chain.create_profile(PROFILE, {'resources:FPGA': '1'})
    yield chain
    chain.stop()


class Hold:
    """Replaces ``owner.name`` by a call that stops until released, the
    first time, then calls the real one."""

    def __init__(self, monkeypatch, owner, name):
        self.reached = threading.Event()
        self.release = threading.Event()
        real = getattr(owner, name)

        def held(*args, **kwargs):
            if not self.reached.is_set():
                self.reached.set()
                assert self.release.wait(30)
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, held)


def _delete_while_held(chain, hold, server_id):
    """DELETE the server while ``hold`` holds its operation; the
    DELETE's status."""
    assert hold.reached.wait(30)
    answer = {}
    deleting = threading.Thread(target=lambda: answer.update(
        status=chain.api('DELETE', '/servers/' + server_id).status_code))
    deleting.start()
    # The DELETE marks the instance, then waits for the operation: both
    # are seen before the operation goes on.
    deadline = time.monotonic() + 30
    while chain.show(server_id)['OS-EXT-STS:task_state'] != 'deleting':
        assert time.monotonic() < deadline, 'the DELETE never marked it'
        time.sleep(0.01)
    assert deleting.is_alive()
    hold.release.set()
    deleting.join(30)
    return answer['status']


def _all_arqs(chain):
    """Every ARQ in Cyborg, bound to an instance or not."""
    resp = chain.stack.client().get('/accelerator_requests')
    assert resp.status_code == 200, resp.text
    return {a['uuid'] for a in resp.json()['arqs']}


def _assert_gone(chain, server_id, arqs_before):
    chain.service.manager.wait_for_background()
    assert chain.api('GET', '/servers/' + server_id).status_code == 404
    assert chain.cyborg_arqs(server_id) == []
    assert _all_arqs(chain) == arqs_before
    assert chain.allocations(server_id) == {}
    assert server_id not in chain.service.deps.driver.host \
        .list_instance_uuids()
    assert chain.service.deps.locks.held() == 0


def test_a_delete_during_a_build_deletes_the_arqs_it_made(chain,
                                                          monkeypatch):
    before = _all_arqs(chain)
    hold = Hold(monkeypatch, cyborg._CyborgClient,
                'create_arqs_and_match_resource_providers')
    server_id = chain.boot('race-build', PROFILE)
    assert _delete_while_held(chain, hold, server_id) == 204
    _assert_gone(chain, server_id, before)


def test_a_delete_during_a_start_leaves_no_guest(chain, monkeypatch):
    before = _all_arqs(chain)
    server_id = chain.boot('race-start', PROFILE)
    chain.wait(server_id, 'ACTIVE')
    assert chain.action(server_id, {'os-stop': None}).status_code == 202
    chain.wait(server_id, 'SHUTOFF')
    hold = Hold(monkeypatch, accelerators, 'get_arqs')
    started = {}
    starting = threading.Thread(target=lambda: started.update(
        status=chain.action(server_id, {'os-start': None}).status_code))
    starting.start()
    assert _delete_while_held(chain, hold, server_id) == 204
    starting.join(30)
    assert started['status'] == 202
    _assert_gone(chain, server_id, before)


def test_a_delete_ends_a_wait_for_bind_events(chain):
    """A build waiting for its bind's event (its FPGA is programmed for
    5 s) stops when its instance is deleted, and the DELETE, which waits
    for the build, answers long before the programming ends, instead of
    after it (or after arq_binding_timeout, had the event been lost)."""
    chain.create_profile('race-slow', {'resources:FPGA': '1',
                                       'accel:bitstream_id': 'slow-race'})
    before = _all_arqs(chain)
    server_id = chain.boot('race-wait', 'race-slow')
    deadline = time.monotonic() + 20
    while not chain.cyborg_arqs(server_id) or chain.cyborg_arqs(
            server_id)[0]['state'] != 'BindStarted':
        assert time.monotonic() < deadline
        time.sleep(0.02)
    started = time.monotonic()
    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204
    assert time.monotonic() - started < 4  # the programming takes 5 s
    _assert_gone(chain, server_id, before)
