"""An in-process kombu transport that wakes consumers instead of polling.

kombu's ``memory`` transport makes every idle consumer poll its queues in
a loop; with a conductor, N agents and the reply queues of every RPC
client, that loop eats a CPU core. This transport is the same in-memory
broker, but a consumer with nothing to do waits on a condition that every
publish notifies, so an idle process is idle and a message is delivered
at once. The all-in-one and the tests use it as
``transport_url = kombu+cyborg-memory:////``.
"""

import socket
import threading
import time
from queue import Empty

from kombu import transport as kombu_transport
from kombu.transport import memory

SCHEME = 'cyborg-memory'
TRANSPORT_URL = 'kombu+%s:////' % SCHEME

_published = threading.Condition()
_generation = [0]


class Channel(memory.Channel):
    def _put(self, queue, message, **kwargs):
        super()._put(queue, message, **kwargs)
        with _published:
            _generation[0] += 1
            _published.notify_all()


class Transport(memory.Transport):
    """The memory broker, with consumers woken by publishers."""

    Channel = Channel
    driver_name = SCHEME
    global_state = memory.Transport.global_state

    def drain_events(self, connection, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            seen = _generation[0]
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                pass
            with _published:
                remaining = (None if deadline is None
                             else deadline - time.monotonic())
                if remaining is not None and remaining <= 0:
                    raise socket.timeout()
                if _generation[0] == seen:
                    _published.wait(remaining)


def register():
    """Make ``cyborg-memory`` a kombu transport name (idempotent)."""
    kombu_transport.TRANSPORT_ALIASES.setdefault(
        SCHEME, 'cyborg_lite.memory_transport:Transport')
