"""An in-process oslo.messaging driver: RPC between threads of one process.

The all-in-one and the tests run the API, the conductor and the agents in
one process. oslo.messaging's own in-memory driver (``fake://``) sleeps
50 ms between polls, and its rabbit driver on kombu's in-memory broker
pays for AMQP framing, base64 and kombu's consumer machinery on every
message: a third of the all-in-one's CPU. This driver keeps the fake
driver's exchanges and queues but wakes a listener the moment a message
arrives. Messages and replies cross as JSON, and failures in
oslo.messaging's remote-exception form, exactly as over RabbitMQ, so code
that works here works between processes. A call with a
``call_monitor_timeout`` is monitored as over RabbitMQ: the server
heartbeats while it works, and a call that hears nothing for that long
(no server took it, or its server is gone) times out then, not at its
``timeout``.

Select it with ``transport_url = cyborg-local://`` (the all-in-one's
default); it is registered as an ``oslo.messaging.drivers`` entry point.
"""

import queue
import threading
import time

import oslo_messaging
from oslo_messaging._drivers import base
from oslo_messaging._drivers import common as rpc_common
from oslo_messaging._drivers import impl_fake
from oslo_serialization import jsonutils

TRANSPORT_URL = 'cyborg-local://'

# The idle listeners of each topic, woken by a delivery on it. A
# delivery wakes only its topic's listeners: the all-in-one has one
# listener per simulated host besides the conductor's.
_listeners_lock = threading.Lock()
_listeners_by_topic: dict[str, set] = {}


def _wake_listeners(topic):
    with _listeners_lock:
        listeners = list(_listeners_by_topic.get(topic, ()))
    for listener in listeners:
        listener.wake()


def _copy(payload):
    """What the receiving side of a real transport would see."""
    return jsonutils.loads(jsonutils.dumps(payload))


class _Exchange(impl_fake.FakeExchange):
    def deliver_message(self, topic, *args, **kwargs):
        super().deliver_message(topic, *args, **kwargs)
        _wake_listeners(topic)


class _ExchangeManager(impl_fake.FakeExchangeManager):
    """Exchanges shared by every driver instance in the process."""

    _exchanges_lock = threading.Lock()
    _exchanges = {}

    def get_exchange(self, name):
        name = name or self._default_exchange
        exchange = self._exchanges.get(name)
        if exchange is None:
            with self._exchanges_lock:
                exchange = self._exchanges.setdefault(name, _Exchange(name))
        return exchange


_HEARTBEAT = object()


class _ReplyQueue(queue.Queue):
    """A call's reply queue; ``monitor``: its call monitor timeout;
    ``expires``: when the call's message expires (its ``timeout`` after
    it was sent, as RabbitMQ expires the message of a call), None for
    never."""

    def __init__(self, monitor=None, timeout=None):
        super().__init__()
        self.monitor = monitor
        self.expires = (None if timeout is None
                        else time.monotonic() + timeout)

    def expired(self):
        return self.expires is not None and time.monotonic() > self.expires


class _IncomingMessage(impl_fake.FakeIncomingMessage):
    def __init__(self, ctxt, message, reply_q, requeue):
        super().__init__(ctxt, message, reply_q, requeue)
        # Set: oslo.messaging's dispatcher heartbeats while it works.
        self.client_timeout = getattr(reply_q, 'monitor', None)

    def heartbeat(self):
        if self._reply_q is not None:
            self._reply_q.put(_HEARTBEAT)

    def reply(self, reply=None, failure=None):
        if self._reply_q is None:
            return
        if failure is not None:
            self._reply_q.put((None, rpc_common.serialize_remote_exception(
                failure)))
        else:
            self._reply_q.put((_copy(reply), None))


class _Listener(impl_fake.FakeListener):
    """Waits for a delivery on its topics instead of sleeping between
    polls."""

    def __init__(self, exchange_manager, targets, pool=None):
        super().__init__(exchange_manager, targets, pool)
        self._delivered = threading.Event()
        self._topics = {target.topic for target in targets}
        with _listeners_lock:
            for topic in self._topics:
                _listeners_by_topic.setdefault(topic, set()).add(self)

    def wake(self):
        self._delivered.set()

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped.is_set():
            # Cleared before looking, so that a delivery made after the
            # look still ends the wait below.
            self._delivered.clear()
            for target in self._targets:
                exchange = self._exchange_manager.get_exchange(
                    target.exchange)
                ctxt, message, reply_q, requeue = exchange.poll(
                    target, self._pool)
                while message is not None and isinstance(
                        reply_q, _ReplyQueue) and reply_q.expired():
                    # Its caller gave up: RabbitMQ would have dropped it.
                    ctxt, message, reply_q, requeue = exchange.poll(
                        target, self._pool)
                if message is not None:
                    return _IncomingMessage(ctxt, message, reply_q, requeue)
            remaining = (None if deadline is None
                         else deadline - time.monotonic())
            if remaining is not None and remaining <= 0:
                return None
            self._delivered.wait(remaining)
        return None

    def stop(self):
        """Stop polling for good (a restarted server makes a new
        listener)."""
        super().stop()
        with _listeners_lock:
            for topic in self._topics:
                listeners = _listeners_by_topic.get(topic, set())
                listeners.discard(self)
                if not listeners:
                    _listeners_by_topic.pop(topic, None)
        self._delivered.set()


class LocalDriver(impl_fake.FakeDriver):
    """oslo.messaging's in-memory driver, evented and serializing."""

    def __init__(self, conf, url, default_exchange=None,
                 allowed_remote_exmods=None):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._exchange_manager = _ExchangeManager(default_exchange)

    def send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
             call_monitor_timeout=None, retry=None, transport_options=None):
        return self._send(target, ctxt, message, wait_for_reply, timeout,
                          transport_options, call_monitor_timeout)

    def _send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
              transport_options=None, call_monitor_timeout=None):
        exchange = self._exchange_manager.get_exchange(target.exchange)
        reply_q = (_ReplyQueue(call_monitor_timeout, timeout)
                   if wait_for_reply else None)
        exchange.deliver_message(target.topic, _copy(ctxt), _copy(message),
                                 server=target.server, fanout=target.fanout,
                                 reply_q=reply_q)
        if not wait_for_reply:
            return None
        reply, failure = self._wait(reply_q, target, timeout,
                                    call_monitor_timeout)
        if failure is not None:
            raise rpc_common.deserialize_remote_exception(
                failure, self._allowed_remote_exmods)
        return reply

    @staticmethod
    def _wait(reply_q, target, timeout, monitor):
        """The ``(reply, failure)`` of a call; MessagingTimeout at
        ``timeout``, or after ``monitor`` seconds without a heartbeat."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = monitor
            if deadline is not None:
                left = deadline - time.monotonic()
                wait = left if wait is None else min(wait, left)
            try:
                answer = reply_q.get(timeout=None if wait is None
                                     else max(wait, 0))
            except queue.Empty:
                raise oslo_messaging.MessagingTimeout(
                    'No reply on topic %s' % target.topic) from None
            if answer is not _HEARTBEAT:
                return answer

    def listen(self, target, batch_size, batch_timeout):
        exchange = target.exchange or self._default_exchange
        listener = _Listener(self._exchange_manager, [
            oslo_messaging.Target(topic=target.topic, server=target.server,
                                  exchange=exchange),
            oslo_messaging.Target(topic=target.topic, exchange=exchange)])
        return base.PollStyleListenerAdapter(listener, batch_size,
                                             batch_timeout)

    def listen_for_notifications(self, targets_and_priorities, pool,
                                 batch_size, batch_timeout):
        targets = [oslo_messaging.Target(topic='%s.%s' % (target.topic,
                                                          priority),
                                         exchange=target.exchange)
                   for target, priority in targets_and_priorities]
        return base.PollStyleListenerAdapter(
            _Listener(self._exchange_manager, targets, pool), batch_size,
            batch_timeout)

    def cleanup(self):
        """Exchanges are shared by the process: leave them."""
