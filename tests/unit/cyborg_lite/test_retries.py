"""The API's answer to a fault in a conductor call: which calls are sent
again, with what, and for how long (cyborg_lite.conductor.retries).

The policy runs on a clock of its own here: an attempt that is lost
"takes" the call monitor timeout, one that cannot be sent takes nothing,
so that the bounds are checked without waiting for them.
"""

import inspect

import oslo_messaging
import pytest

from cyborg_lite.conductor import manager
from cyborg_lite.conductor import retries
from cyborg_lite.conductor import rpcapi

TIMEOUT = 30
MONITOR = 3
FAULT_TIMEOUT = 9


class Clock:
    def __init__(self):
        self.now = 100.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class Conductor:
    """Answers attempts from a script: each entry is ``'lost'`` (no
    heartbeat for the monitor timeout), ``'slow'`` (rpc_timeout spent
    with heartbeats), ``'undelivered'`` (the broker is away), or a
    result."""

    def __init__(self, clock, script):
        self.clock = clock
        self.script = list(script)
        self.attempts = []

    def __call__(self, kwargs):
        self.attempts.append((self.clock.now, dict(kwargs)))
        step = self.script.pop(0) if self.script else 'lost'
        if step == 'lost':
            self.clock.now += MONITOR
            raise oslo_messaging.MessagingTimeout('no reply')
        if step == 'slow':
            self.clock.now += TIMEOUT
            raise oslo_messaging.MessagingTimeout('no reply')
        if step == 'undelivered':
            raise oslo_messaging.MessageDeliveryFailure('broker away')
        self.clock.now += 0.01
        return step


def _policy(clock):
    return retries.FaultPolicy(TIMEOUT, MONITOR, FAULT_TIMEOUT, clock=clock,
                               sleep=clock.sleep)


def _run(method, script, kwargs=None):
    clock = Clock()
    conductor = Conductor(clock, script)
    start = clock.now
    try:
        outcome = _policy(clock).call(method, kwargs or {'x': 1}, conductor)
    except Exception as exc:
        outcome = exc
    return outcome, conductor.attempts, clock.now - start


@pytest.mark.parametrize('method', sorted(retries.RETRIED))
def test_a_lost_call_that_is_safe_to_repeat_is_sent_again(method):
    outcome, attempts, took = _run(method, ['lost', 'answer'])
    assert outcome == 'answer'
    assert len(attempts) == 2
    # Answered as soon as the loss was known and the repeat came back.
    assert took == pytest.approx(MONITOR + 0.01)


@pytest.mark.parametrize('method', sorted(retries.NOT_RETRIED))
def test_a_lost_call_that_is_not_safe_to_repeat_fails_at_once(method):
    outcome, attempts, took = _run(method, ['lost', 'answer'])
    assert isinstance(outcome, oslo_messaging.MessagingTimeout)
    assert len(attempts) == 1
    assert took == MONITOR


def test_a_repeat_says_so_where_the_conductor_must_know():
    for method, extra in retries.REPEAT_KWARGS.items():
        _, attempts, _ = _run(method, ['lost', 'lost', 'answer'],
                              {'uuids': ['a']})
        assert attempts[0][1] == {'uuids': ['a']}
        assert attempts[1][1] == dict({'uuids': ['a']}, **extra)
        assert attempts[2][1] == attempts[1][1]
    _, attempts, _ = _run('arq_create', ['lost', 'answer'],
                          {'idempotency_key': 'k'})
    assert [kw for _, kw in attempts] == [{'idempotency_key': 'k'}] * 2


def test_a_slow_call_that_kept_its_heartbeats_is_not_sent_again():
    outcome, attempts, took = _run('arq_bind', ['slow', 'answer'])
    assert isinstance(outcome, oslo_messaging.MessagingTimeout)
    assert len(attempts) == 1
    assert took == TIMEOUT


def test_lost_again_and_again_the_call_fails_within_the_fault_timeout():
    outcome, attempts, took = _run('arq_list', ['lost'] * 10)
    assert isinstance(outcome, oslo_messaging.MessagingTimeout)
    # Lost at 3 s, 6 s and 9 s: a fourth attempt could not be known
    # lost within the fault timeout.
    assert len(attempts) == 3
    assert took == FAULT_TIMEOUT


@pytest.mark.parametrize('method', ['arq_create', 'deployable_program',
                                    'device_profile_create'])
def test_an_undelivered_call_is_sent_again_whatever_its_method(method):
    outcome, attempts, took = _run(method, ['undelivered'] * 3 + ['answer'])
    assert outcome == 'answer'
    assert len(attempts) == 4
    assert took == pytest.approx(3 * retries.UNDELIVERED_PAUSE + 0.01)


def test_while_the_broker_is_away_a_call_fails_within_the_fault_timeout():
    outcome, attempts, took = _run('arq_list', ['undelivered'] * 1000)
    assert isinstance(outcome, oslo_messaging.MessageDeliveryFailure)
    # Sent again until a lost attempt could no longer be known lost
    # within the fault timeout.
    assert took <= FAULT_TIMEOUT - MONITOR + retries.UNDELIVERED_PAUSE
    assert took >= FAULT_TIMEOUT - MONITOR - retries.UNDELIVERED_PAUSE
    assert len(attempts) > 1


def test_a_call_lost_when_the_broker_went_away_waits_for_its_return():
    # Lost, then undelivered while the broker is away, then answered.
    outcome, attempts, took = _run(
        'arq_bind', ['lost', 'undelivered', 'undelivered', 'answer'])
    assert outcome == 'answer'
    assert [kw for _, kw in attempts][1:] == [{'x': 1, 'repeat': True}] * 3
    assert took <= FAULT_TIMEOUT


def test_other_errors_are_not_retried():
    clock = Clock()

    def attempt(kwargs):
        raise oslo_messaging.RemoteError('KeyError', 'x')
    with pytest.raises(oslo_messaging.RemoteError):
        _policy(clock).call('arq_list', {}, attempt)


def _original(fn):
    """The function under oslo.messaging's expected_exceptions wrapper,
    which does not keep the wrapped signature."""
    for cell in fn.__closure__ or ():
        if inspect.isfunction(cell.cell_contents):
            return _original(cell.cell_contents)
    return fn


def _public(cls):
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith('_')}


def test_every_conductor_call_has_a_decision():
    methods = _public(rpcapi.ConductorAPI)
    assert set(retries.RETRIED) | set(retries.NOT_RETRIED) == methods
    assert set(retries.RETRIED) & set(retries.NOT_RETRIED) == set()
    for method, extra in retries.REPEAT_KWARGS.items():
        assert method in retries.RETRIED
        server = inspect.signature(_original(
            getattr(manager.ConductorManager, method)))
        assert set(extra) <= set(server.parameters), method


def test_reads_and_creates_are_retried_and_sent_without_heartbeats():
    # Database-only calls go without heartbeats, so a lost one must be
    # told by its timeout and be safe to repeat.
    assert rpcapi.DATABASE_ONLY <= set(retries.RETRIED)
