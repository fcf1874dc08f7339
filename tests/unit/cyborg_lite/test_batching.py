"""CallBatcher: calls that queue up share one message, each caller gets
its own answer, and no caller waits behind a slow message for long."""

import random
import threading
import time

import oslo_messaging
import pytest

from cyborg_lite import exception
from cyborg_lite.conductor import batching

WAIT = 10  # seconds: a bound on waits that end at once when all is well


class Conductor:
    """Answers like the conductor: ``send_one`` and ``send_many`` echo
    the kwargs back. The first call sent waits for ``release`` while
    ``hold_first`` is set."""

    def __init__(self, hold_first=False, answers=None, fail=None):
        self.ones, self.manys = [], []
        self.release = threading.Event()
        self._hold = hold_first
        self._answers = answers
        self._fail = fail
        self.lock = threading.Lock()

    def _held(self):
        with self.lock:
            hold, self._hold = self._hold, False
        if hold:
            assert self.release.wait(WAIT)

    def send_one(self, ctx, method, kwargs):
        with self.lock:
            self.ones.append((ctx, method, kwargs))
        self._held()
        return {'ctx': ctx, 'method': method, 'kwargs': kwargs}

    def send_many(self, calls):
        with self.lock:
            self.manys.append(calls)
        if self._fail is not None:
            raise self._fail
        if self._answers is not None:
            return self._answers
        return [{'result': {'ctx': c, 'method': m, 'kwargs': k}}
                for c, m, k in calls]


def _batcher(conductor, **kw):
    kw.setdefault('max_size', 16)
    return batching.CallBatcher(conductor.send_one, conductor.send_many,
                                **kw)


def _in_thread(batcher, ctx, method='arq_get', **kwargs):
    """Call in a thread; the thread's ``outcome`` is ``(ok, value)``."""
    def run():
        try:
            thread.outcome = (True, batcher.call(ctx, method, kwargs))
        except Exception as exc:
            thread.outcome = (False, exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.outcome = None
    thread.start()
    return thread


def _until(predicate):
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, 'timed out'
        time.sleep(0.001)


def _queued(batcher, n):
    _until(lambda: len(batcher._queue) == n)


def _finished(threads):
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive()
    return [t.outcome for t in threads]


def test_a_call_alone_goes_as_itself():
    conductor = Conductor()
    result = _batcher(conductor).call('ctx', 'arq_get', {'uuid': 'u1'})
    assert result == {'ctx': 'ctx', 'method': 'arq_get',
                      'kwargs': {'uuid': 'u1'}}
    assert conductor.ones == [('ctx', 'arq_get', {'uuid': 'u1'})]
    assert conductor.manys == []


def test_calls_queued_behind_a_message_share_the_next_one():
    conductor = Conductor(hold_first=True)
    batcher = _batcher(conductor)
    first = _in_thread(batcher, 'c0', uuid='u0')
    _until(lambda: conductor.ones)
    queued = [_in_thread(batcher, 'c%d' % n, uuid='u%d' % n)
              for n in (1, 2, 3)]
    _queued(batcher, 3)
    conductor.release.set()
    outcomes = _finished([first] + queued)
    for n, (ok, value) in enumerate(outcomes):
        assert ok
        assert value == {'ctx': 'c%d' % n, 'method': 'arq_get',
                         'kwargs': {'uuid': 'u%d' % n}}
    assert len(conductor.ones) == 1
    assert [len(m) for m in conductor.manys] == [3]


def test_a_message_takes_at_most_max_size_calls():
    conductor = Conductor(hold_first=True)
    batcher = _batcher(conductor, max_size=2)
    first = _in_thread(batcher, 'c0')
    _until(lambda: conductor.ones)
    queued = [_in_thread(batcher, 'c%d' % n) for n in range(1, 6)]
    _queued(batcher, 5)
    conductor.release.set()
    assert all(ok for ok, _ in _finished([first] + queued))
    # Five queued calls: two messages of two, then the last one alone.
    assert [len(m) for m in conductor.manys] == [2, 2]
    assert len(conductor.ones) == 2


def test_each_caller_gets_its_own_error():
    conductor = Conductor(hold_first=True, answers=[
        {'result': 'fine'},
        {'error': {'class': 'ARQNotFound', 'message': 'no ARQ u2'}},
        {'error': {'class': 'DBConnectionError', 'message': 'db away'}}])
    batcher = _batcher(conductor)
    first = _in_thread(batcher, 'c0')
    _until(lambda: conductor.ones)
    queued = [_in_thread(batcher, 'c%d' % n) for n in (1, 2, 3)]
    _queued(batcher, 3)
    conductor.release.set()
    outcomes = _finished(queued)
    assert outcomes[0] == (True, 'fine')
    ok, error = outcomes[1]
    assert not ok and type(error) is exception.ARQNotFound
    assert error.message == 'no ARQ u2'
    ok, error = outcomes[2]
    assert not ok and isinstance(error, oslo_messaging.RemoteError)
    assert (error.exc_type, error.value) == ('DBConnectionError', 'db away')
    assert _finished([first])[0][0]


@pytest.mark.parametrize('conductor', [
    Conductor(hold_first=True, fail=oslo_messaging.MessagingTimeout('t')),
    Conductor(hold_first=True, answers=[{'result': 1}]),
], ids=['failed message', 'short answer'])
def test_a_message_that_fails_fails_each_of_its_calls(conductor):
    batcher = _batcher(conductor)
    first = _in_thread(batcher, 'c0')
    _until(lambda: conductor.ones)
    queued = [_in_thread(batcher, 'c%d' % n) for n in (1, 2)]
    _queued(batcher, 2)
    conductor.release.set()
    for ok, error in _finished(queued):
        assert not ok
        assert isinstance(error, oslo_messaging.MessagingException)
    assert _finished([first])[0][0]


def test_a_queued_call_goes_alone_after_max_wait():
    conductor = Conductor(hold_first=True)
    batcher = _batcher(conductor, max_wait=0.05)
    stuck = _in_thread(batcher, 'slow')
    _until(lambda: conductor.ones)
    # The first message never returns while this call is made.
    assert batcher.call('fast', 'arq_get', {}) == {
        'ctx': 'fast', 'method': 'arq_get', 'kwargs': {}}
    assert stuck.is_alive()
    conductor.release.set()
    assert _finished([stuck])[0][0]
    assert conductor.manys == []


def test_a_call_that_may_be_slow_never_shares_a_message():
    conductor = Conductor(hold_first=True)
    batcher = _batcher(conductor, max_wait=WAIT,
                       alone={'deployable_program'})
    first = _in_thread(batcher, 'c0')
    _until(lambda: conductor.ones)
    queued = _in_thread(batcher, 'c1')
    _queued(batcher, 1)
    # Goes at once, as itself, though a message is in flight and a call
    # waits behind it; the queued call does not wait behind it.
    assert batcher.call('p', 'deployable_program', {'uuid': 'd'}) == {
        'ctx': 'p', 'method': 'deployable_program',
        'kwargs': {'uuid': 'd'}}
    assert list(batcher._queue) and first.is_alive()
    conductor.release.set()
    assert all(ok for ok, _ in _finished([first, queued]))
    assert [m for _, m, _ in conductor.ones] == [
        'arq_get', 'deployable_program', 'arq_get']
    assert conductor.manys == []
    assert batcher._flying == 0


def test_many_callers_each_get_their_own_answer():
    rng = random.Random(7)

    def send_one(ctx, method, kwargs):
        time.sleep(rng.random() / 1000)
        return kwargs['n']

    def send_many(calls):
        time.sleep(rng.random() / 1000)
        return [{'result': kwargs['n']} for _, _, kwargs in calls]

    batcher = batching.CallBatcher(send_one, send_many, max_size=4)
    got = {}

    def caller(base):
        for n in range(base, base + 50):
            got[n] = batcher.call('ctx', 'arq_get', {'n': n})

    threads = [threading.Thread(target=caller, args=(t * 1000,))
               for t in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 3)
        assert not t.is_alive()
    assert got == {n: n for n in got} and len(got) == 600
    assert batcher._flying == 0 and not batcher._queue


def test_outcome_of_answers_results_and_errors():
    def raises(exc):
        raise exc

    assert batching.outcome_of(lambda: [1]) == {'result': [1]}
    assert batching.outcome_of(
        raises, exception.ARQNotFound(uuid='u1')) == {'error': {
            'class': 'ARQNotFound',
            'message': 'Accelerator request u1 could not be found.'}}
    assert batching.outcome_of(raises, KeyError('k')) == {'error': {
        'class': 'KeyError', 'message': "'k'"}}
