"""Waiting for external events (``accelerator-request-bound``).

The manager says which events it expects for an instance
(``InstanceEvents.prepare``) *before* it starts the work that
causes them, so an event that arrives early is not lost; the API feeds
events in with ``InstanceEvents.deliver``. Events nobody waits for
are dropped, as in Nova. An event is keyed by ``(name, tag)``; its value
is the status (``completed`` or ``failed``). Thread-safe: one condition
variable guards every waiter.
"""

import threading
import time

from nova_shim import exception

EventKey = tuple[str, str]


class EventWaiter:
    """The events one operation on one instance waits for."""

    def __init__(self, registry: 'InstanceEvents', instance_uuid: str,
                 keys: list[EventKey]) -> None:
        self._registry = registry
        self.instance_uuid = instance_uuid
        self.expected = set(keys)
        self.received: dict[EventKey, str] = {}
        # Set when the instance is deleted: the wait ends at once.
        self.cancelled = False

    @property
    def done(self) -> bool:
        return self.expected <= set(self.received)

    def exit_early(self, key: EventKey, status: str) -> None:
        """Count an event as received (the ARQ was resolved already)."""
        self._registry.deliver(self.instance_uuid, key[0], key[1], status)

    def wait(self, timeout: float) -> dict[EventKey, str]:
        """Until every event came, or one ``failed``: the statuses.

        Raises InstanceEventTimeout after ``timeout`` seconds, and
        InstanceDeleting as soon as the instance's waits are cleared.
        """
        deadline = time.monotonic() + timeout
        cond = self._registry.condition
        try:
            with cond:
                while not self.done and 'failed' not in self.received.values():
                    if self.cancelled:
                        raise exception.InstanceDeleting(
                            instance_id=self.instance_uuid)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        missing = sorted(self.expected - set(self.received))
                        raise exception.InstanceEventTimeout(
                            events=['%s-%s' % k for k in missing],
                            instance_uuid=self.instance_uuid)
                    cond.wait(left)
                return dict(self.received)
        finally:
            self._registry.forget(self)


class InstanceEvents:
    """Per-instance expected events, shared by the manager and the API."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self._waiters: dict[str, list[EventWaiter]] = {}

    def prepare(self, instance_uuid: str,
                keys: list[EventKey]) -> EventWaiter:
        waiter = EventWaiter(self, instance_uuid, keys)
        with self.condition:
            self._waiters.setdefault(instance_uuid, []).append(waiter)
        return waiter

    def deliver(self, instance_uuid: str, name: str, tag: str | None,
                status: str) -> bool:
        """Hand an event to whoever waits for it; False if nobody does."""
        key = (name, tag or '')
        taken = False
        with self.condition:
            for waiter in self._waiters.get(instance_uuid, []):
                if key in waiter.expected and key not in waiter.received:
                    waiter.received[key] = status
                    taken = True
            if taken:
                self.condition.notify_all()
        return taken

    def forget(self, waiter: EventWaiter) -> None:
        with self.condition:
            waiters = self._waiters.get(waiter.instance_uuid, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._waiters.pop(waiter.instance_uuid, None)

    def clear(self, instance_uuid: str) -> None:
        """Drop every waiter of an instance (it is being deleted, or its
        build failed); a wait of theirs ends with InstanceDeleting."""
        with self.condition:
            for waiter in self._waiters.pop(instance_uuid, []):
                waiter.cancelled = True
            self.condition.notify_all()
