"""Conductor calls that queue up in a process travel as one RPC message.

An RPC call over RabbitMQ costs about 2 ms of CPU, shared by the caller,
the conductor and the broker, however little it carries. An API process
under load has several calls to the conductor waiting at once; sending
them together as one ``call_batch`` pays that cost once for all of them.

The rule is Nagle's, per process. A call goes out at once, alone and as
itself, while fewer than ``in_flight`` messages of this process wait for
their replies: an idle or lightly loaded API adds no delay and sends
exactly the calls it sent before. Otherwise the call queues, and the
next call to go out takes every queued call with it (up to ``max_size``).
A queued call waits at most ``max_wait`` seconds for that, then goes out
itself, so one slow message (a vGPU bind that waits for its agent) holds
the others back for no longer.

A message is answered when its slowest call is done. Calls that may
take far longer than that (``alone``: an FPGA programmed for as long as
the agent's programming timeout allows, a device's status set while
Placement answers slowly) never share one: each goes out at once as
itself, whatever is in flight, and no other call waits behind it.

The conductor runs the calls of one message (those that may wait on an
agent side by side, see ``ConductorManager.call_batch``) and
answers each with its result or its error; ``CallBatcher`` hands
every caller its own answer, and a caller sees the same result or
exception as from a call of its own.
"""

import collections
import logging
import threading

import oslo_messaging

from cyborg_lite import exception

LOG = logging.getLogger(__name__)


def outcome_of(fn, *args, **kwargs) -> dict:
    """Run ``fn``; its result or its error as ``call_batch`` answers it:
    ``{'result': value}`` or ``{'error': {'class': name, 'message': text}}``.
    """
    try:
        return {'result': fn(*args, **kwargs)}
    except oslo_messaging.ExpectedException as wrapped:
        exc = wrapped.exc_info[1]
    except Exception as exc_:  # noqa: BLE001 - every error is answered
        LOG.exception('Unexpected error in a batched call')
        exc = exc_
    message = (exc.message if isinstance(exc, exception.CyborgLiteException)
               else str(exc))
    return {'error': {'class': type(exc).__name__, 'message': message}}


def error_from(error: dict) -> Exception:
    """The exception a caller sees for an ``{'error': ...}`` answer: the
    domain exception of that name, as oslo.messaging rebuilds it from a
    call of its own, or a RemoteError for any other."""
    cls = getattr(exception, error['class'], None)
    if isinstance(cls, type) and issubclass(cls,
                                            exception.CyborgLiteException):
        return cls(error['message'])
    return oslo_messaging.RemoteError(error['class'], error['message'])


class _Call:
    __slots__ = ('ctx', 'method', 'kwargs', 'ready', 'leads', 'answer')

    def __init__(self, ctx, method, kwargs):
        self.ctx = ctx
        self.method = method
        self.kwargs = kwargs
        # Set when the call has its answer, or when it must send.
        self.ready = threading.Event()
        self.leads = False
        self.answer = None     # (ok, value)


class CallBatcher:
    """Coalesces the calls of one process, as the module says.

    ``send_one(ctx, method, kwargs)`` makes one ordinary call and returns
    its result or raises (the calls of the methods in ``alone`` always go
    that way, and at once); ``send_many(calls)`` sends ``[(ctx, method,
    kwargs)]`` as one message and returns their answers in order (see
    ``outcome_of``).
    """

    def __init__(self, send_one, send_many, max_size, in_flight=1,
                 max_wait=0.05, alone=frozenset()):
        self._send_one = send_one
        self._alone = alone
        self._send_many = send_many
        self._max_size = max_size
        self._in_flight = in_flight
        self._max_wait = max_wait
        self._lock = threading.Lock()
        self._queue = collections.deque()
        self._flying = 0

    def call(self, ctx, method, kwargs):
        if method in self._alone:
            return self._send_one(ctx, method, kwargs)
        call = _Call(ctx, method, kwargs)
        with self._lock:
            if self._flying < self._in_flight:
                self._flying += 1
                call.leads = True
            else:
                self._queue.append(call)
        if not call.leads:
            self._wait_for_turn(call)
        if call.leads:
            self._send_from(call)
        ok, value = call.answer
        if ok:
            return value
        raise value

    def _wait_for_turn(self, call):
        if not call.ready.wait(self._max_wait):
            with self._lock:
                try:
                    self._queue.remove(call)
                except ValueError:
                    pass    # taken into a message, or handed the turn
                else:
                    self._flying += 1
                    call.leads = True
        if not call.leads:
            call.ready.wait()

    def _send_from(self, first):
        """Send ``first`` and the calls queued behind it, hand each its
        answer, then hand the turn to the next queued call."""
        with self._lock:
            calls = [first]
            while self._queue and len(calls) < self._max_size:
                calls.append(self._queue.popleft())
        answers = None
        try:
            answers = self._answers(calls)
        finally:
            if answers is None:     # interrupted: no caller waits forever
                answers = [(False, oslo_messaging.MessagingException(
                    'The batched call was interrupted.'))] * len(calls)
            for call, answer in zip(calls, answers, strict=True):
                call.answer = answer
                if call is not first:
                    call.ready.set()
            with self._lock:
                if self._queue:
                    after = self._queue.popleft()
                    after.leads = True
                    after.ready.set()
                else:
                    self._flying -= 1

    def _answers(self, calls):
        if len(calls) == 1:
            call = calls[0]
            try:
                return [(True, self._send_one(call.ctx, call.method,
                                              call.kwargs))]
            except Exception as exc:
                return [(False, exc)]
        try:
            outcomes = self._send_many(
                [(c.ctx, c.method, c.kwargs) for c in calls])
            if len(outcomes) != len(calls):
                raise oslo_messaging.MessagingException(
                    'The conductor answered %d of %d batched calls.'
                    % (len(outcomes), len(calls)))
        except Exception as exc:
            return [(False, exc)] * len(calls)
        return [(True, o['result']) if 'result' in o
                else (False, error_from(o['error'])) for o in outcomes]
