"""The in-process transport behaves like RabbitMQ to its callers:
replies are copies, unexpected failures arrive as RemoteError, expected
ones as the exception class the server raised, and a call nobody answers
times out."""

import threading
import time

import oslo_messaging
import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite import exception
from cyborg_lite import local_transport
from cyborg_lite import rpc


class Bug(Exception):
    """Not in the allowed remote-exception modules."""


class Endpoint:
    def __init__(self):
        self.stored = {'items': [1, 2]}
        self.casts = threading.Event()

    def echo(self, ctxt, value):
        return value

    def slow(self, ctxt, seconds):
        time.sleep(seconds)
        return seconds

    def stored_dict(self, ctxt):
        return self.stored

    @oslo_messaging.expected_exceptions(exception.ARQNotFound)
    def missing(self, ctxt):
        raise exception.ARQNotFound(uuid='nope')

    def broken(self, ctxt):
        raise Bug('bug')

    def note(self, ctxt):
        self.casts.set()


@pytest.fixture
def server():
    conf = cl_conf.build_conf(overrides={
        (None, 'transport_url'): local_transport.TRANSPORT_URL})
    transport = rpc.get_transport(conf)
    endpoint = Endpoint()
    srv = rpc.get_server(transport, 'local-test', 'host1', [endpoint])
    srv.start()
    client = rpc.get_client(transport, 'local-test', '1.0', timeout=5)
    yield client, endpoint, transport
    srv.stop()
    srv.wait()


def test_call_returns_a_json_copy(server):
    client, endpoint, _ = server
    assert client.call({}, 'echo', value=('a', 1)) == ['a', 1]
    reply = client.call({}, 'stored_dict')
    reply['items'].append(3)
    assert endpoint.stored == {'items': [1, 2]}


def test_expected_failure_keeps_its_class(server):
    client, _, _ = server
    with pytest.raises(exception.ARQNotFound):
        client.call({}, 'missing')


def test_unexpected_failure_is_a_remote_error(server):
    client, _, _ = server
    with pytest.raises(oslo_messaging.RemoteError) as caught:
        client.call({}, 'broken')
    assert caught.value.exc_type == 'Bug'


def test_cast_is_delivered(server):
    client, endpoint, _ = server
    client.cast({}, 'note')
    assert endpoint.casts.wait(5)


def test_call_without_a_server_times_out(server):
    _, _, transport = server
    lonely = rpc.get_client(transport, 'nobody-listens', '1.0', timeout=0.2)
    with pytest.raises(oslo_messaging.MessagingTimeout):
        lonely.call({}, 'echo', value=1)


class CountingEndpoint(Endpoint):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def echo(self, ctxt, value):
        self.calls += 1
        return value


def test_a_delivery_wakes_only_the_listeners_of_its_topic(server):
    client, _, transport = server
    other = CountingEndpoint()
    other_server = rpc.get_server(transport, 'local-other', 'host2', [other])
    other_server.start()
    try:
        other_client = rpc.get_client(transport, 'local-other', '1.0',
                                      timeout=5)
        assert other_client.call({}, 'echo', value=1) == 1
        (listener,) = local_transport._listeners_by_topic['local-other']
        listener._delivered.clear()
        for value in range(20):
            assert client.call({}, 'echo', value=value) == value
        assert not listener._delivered.is_set()
        assert other_client.call({}, 'echo', value=2) == 2
        assert other.calls == 2
    finally:
        other_server.stop()
        other_server.wait()
    # A stopped listener is forgotten.
    assert 'local-other' not in local_transport._listeners_by_topic


def test_a_monitored_call_nobody_takes_times_out_at_its_monitor(server):
    """As over RabbitMQ: no heartbeat within ``call_monitor_timeout``
    ends the wait then, whatever the call's timeout."""
    _, _, transport = server
    lonely = rpc.get_client(transport, 'nobody-listens', '1.0', timeout=30)
    started = time.monotonic()
    with pytest.raises(oslo_messaging.MessagingTimeout):
        lonely.prepare(call_monitor_timeout=1).call({}, 'echo', value=1)
    assert time.monotonic() - started < 15


def test_a_monitored_call_that_works_long_keeps_its_heartbeats(server):
    """The server heartbeats every half monitor while it works: a call
    longer than its monitor completes."""
    client, _, _ = server
    assert client.prepare(call_monitor_timeout=2, timeout=20).call(
        {}, 'slow', seconds=3) == 3


def test_a_call_whose_caller_gave_up_is_not_run_later(server):
    """Its message expires with its timeout, as RabbitMQ's does: a
    server that starts later does not run it."""
    _, _, transport = server
    late = CountingEndpoint()
    client = rpc.get_client(transport, 'local-late', '1.0', timeout=0.2)
    with pytest.raises(oslo_messaging.MessagingTimeout):
        client.call({}, 'echo', value=1)
    time.sleep(0.3)
    late_server = rpc.get_server(transport, 'local-late', 'host3', [late])
    late_server.start()
    try:
        fresh = rpc.get_client(transport, 'local-late', '1.0', timeout=5)
        assert fresh.call({}, 'echo', value=2) == 2
        assert late.calls == 1
    finally:
        late_server.stop()
        late_server.wait()
