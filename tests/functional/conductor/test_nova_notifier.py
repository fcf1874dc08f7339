"""The conductor's Nova notifier against a real HTTP endpoint on loopback."""

import time

import pytest

from cyborg_lite import conf as cyborg_conf
from cyborg_lite.conductor import nova
from tests.fixtures import nova_events
from tests.fixtures import processes


@pytest.fixture
def nova_endpoint():
    with nova_events.RecordingNova() as server:
        yield server


def _bound_arq(number):
    return {'uuid': 'arq-%d' % number, 'instance_uuid': 'vm-%d' % number,
            'state': 'Bound'}


def _notifier(url, **nova_options):
    """A notifier (not started) that sends to ``url``, with the given
    ``[nova]`` options."""
    overrides = {('nova', 'endpoint_override'): url,
                 ('nova', 'auth_type'): 'none'}
    overrides.update({('nova', name): value
                      for name, value in nova_options.items()})
    return nova.NovaNotifier(cyborg_conf.build_conf(overrides=overrides))


def _tags_per_post(nova_endpoint):
    return [[e['tag'] for e in body['events']]
            for _, _, body in nova_endpoint.posts]


def test_events_reach_nova_and_the_record_of_them_stays_bounded(
        nova_endpoint):
    url = nova_endpoint.url + '/v2.1'
    notifier = _notifier(url, events_per_request=100)
    notifier.start()
    try:
        count = nova.SENT_KEPT + 20
        for number in range(count):
            notifier.notify([_bound_arq(number)])
        notifier.drain()
    finally:
        notifier.stop()

    # Every event once, in order; those that queued up while a POST was
    # on its way went together in the next one, up to the batch size.
    sent = [event for _, _, body in nova_endpoint.posts
            for event in body['events']]
    assert sent == [{'name': 'accelerator-request-bound',
                     'server_uuid': 'vm-%d' % n, 'tag': 'arq-%d' % n,
                     'status': 'completed'} for n in range(count)]
    assert all(len(body['events']) <= 100
               for _, _, body in nova_endpoint.posts)
    path, version, body = nova_endpoint.posts[-1]
    assert path == '/v2.1/os-server-external-events'
    assert version == 'compute 2.82'
    # A long-running conductor keeps only the latest answers.
    assert len(notifier.sent) == min(len(nova_endpoint.posts),
                                     nova.SENT_KEPT)
    assert notifier.sent[-1] == (body['events'], 200)


def test_events_queued_while_nova_answers_go_in_one_post(nova_endpoint):
    url = nova_endpoint.url + '/v2.1'
    notifier = _notifier(url)
    # Queued before the sending thread runs: they are all waiting when
    # it takes the first.
    for number in range(150):
        notifier.notify([_bound_arq(number)])
    notifier.start()
    try:
        notifier.drain()
    finally:
        notifier.stop()
    assert [len(body['events']) for _, _, body in nova_endpoint.posts] == \
        [100, 50]


def test_one_event_per_request(nova_endpoint):
    notifier = _notifier(nova_endpoint.url, events_per_request=1)
    notifier.notify([_bound_arq(1), _bound_arq(2)])
    notifier.start()
    try:
        notifier.drain()
    finally:
        notifier.stop()
    assert _tags_per_post(nova_endpoint) == [['arq-1'], ['arq-2']]


def test_events_of_the_wait_share_a_post_and_a_stop_does_not_wait(
        nova_endpoint):
    notifier = _notifier(nova_endpoint.url, events_wait=2.0)
    notifier.start()
    try:
        # Binds 50 ms apart, well within the wait: one POST.
        for number in range(3):
            notifier.notify([_bound_arq(number)])
            time.sleep(0.05)
        notifier.drain()
        assert _tags_per_post(nova_endpoint) == [['arq-0', 'arq-1', 'arq-2']]
        # A stop during a wait sends what was gathered, without waiting
        # the rest of it.
        notifier.notify([_bound_arq(3)])
        started = time.monotonic()
    finally:
        notifier.stop()
    assert time.monotonic() - started < 1.5
    assert _tags_per_post(nova_endpoint)[-1] == ['arq-3']


def test_events_nova_never_waits_for_wait_longer_for_company(
        nova_endpoint):
    notifier = _notifier(nova_endpoint.url, events_wait=0,
                         resolved_events_wait=2.0)
    notifier.start()
    try:
        # Binds resolved before their calls answered, 50 ms apart:
        # one POST, although events_wait is 0.
        for number in range(3):
            notifier.notify([_bound_arq(number)], awaited=False)
            time.sleep(0.05)
        notifier.drain()
    finally:
        notifier.stop()
    assert _tags_per_post(nova_endpoint) == [['arq-0', 'arq-1', 'arq-2']]


def test_an_event_nova_may_wait_for_ends_the_longer_wait(nova_endpoint):
    notifier = _notifier(nova_endpoint.url, events_wait=0.05,
                         resolved_events_wait=30)
    notifier.start()
    try:
        notifier.notify([_bound_arq(1)], awaited=False)
        time.sleep(0.2)
        assert nova_endpoint.posts == []
        started = time.monotonic()
        notifier.notify([_bound_arq(2)])
        notifier.drain()
        took = time.monotonic() - started
    finally:
        notifier.stop()
    assert _tags_per_post(nova_endpoint) == [['arq-1', 'arq-2']]
    assert took < 2


def test_a_stop_sends_the_events_nova_never_waits_for_at_once(
        nova_endpoint):
    notifier = _notifier(nova_endpoint.url, resolved_events_wait=30)
    notifier.start()
    notifier.notify([_bound_arq(1)], awaited=False)
    time.sleep(0.1)
    started = time.monotonic()
    notifier.stop()
    assert time.monotonic() - started < 1.5
    assert _tags_per_post(nova_endpoint) == [['arq-1']]


def test_without_a_wait_each_lone_bind_is_sent_at_once(nova_endpoint):
    notifier = _notifier(nova_endpoint.url, events_wait=0)
    notifier.start()
    try:
        for number in range(3):
            notifier.notify([_bound_arq(number)])
            notifier.drain()
    finally:
        notifier.stop()
    assert _tags_per_post(nova_endpoint) == [['arq-0'], ['arq-1'], ['arq-2']]


def test_a_stop_skips_the_back_off_while_nova_is_away():
    # Nothing listens on the port: every POST fails to connect.
    notifier = _notifier('http://127.0.0.1:%d' % processes.free_port(),
                         events_wait=0, event_retries=3,
                         event_retry_delay=2.0)
    notifier.start()
    notifier.notify([_bound_arq(1)])
    deadline = time.monotonic() + 10
    while not notifier.sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [status for _, status in notifier.sent] == [None]
    # Now in its first back-off (2 s, then 4 and 8): a stop ends it.
    started = time.monotonic()
    notifier.stop()
    assert time.monotonic() - started < 1.5
    assert len(notifier.sent) == 1


@pytest.mark.parametrize('status', [401, 403])
def test_events_nova_refuses_the_credentials_of_are_retried(
        nova_endpoint, caplog, status):
    """A Nova whose policy refuses the conductor's user (or a token it
    cannot validate yet) is an outage like any other: the reason is
    logged and the events are sent again, with back-off."""
    nova_endpoint.refuse(2, status, 'Policy does not know this user.')
    notifier = _notifier(nova_endpoint.url + '/v2.1', event_retry_delay=0.05)
    notifier.start()
    try:
        notifier.notify([_bound_arq(1)])
        notifier.drain()
        deadline = time.monotonic() + 10
        while len(nova_endpoint.posts) < 3:
            assert time.monotonic() < deadline, nova_endpoint.posts
            time.sleep(0.02)
    finally:
        notifier.stop()
    assert [status for _, status in notifier.sent] == [status, status, 200]
    assert [e['tag'] for e in nova_endpoint.events] == ['arq-1'] * 3
    refusals = [r.getMessage() for r in caplog.records
                if 'did not take' in r.getMessage()]
    assert len(refusals) == 2, refusals
    assert 'Policy does not know this user.' in refusals[0]
    assert str(status) in refusals[0]
