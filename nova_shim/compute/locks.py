"""One lock per instance, as Nova's compute manager takes one named
after the instance around a build, each action and a terminate.

A delete waits for the operation that runs on the instance (a build, a
start, a rebuild...) to end before it cleans up, and so cleans up what
that operation made: ARQs created and bound by a build, a domain that a
start defined again. Operations on different instances never wait for
each other. The locks are re-entrant, and an instance's lock is
forgotten when nobody holds or waits for it.
"""

import contextlib
import threading


class InstanceLocks:
    """The locks of the instances being worked on."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        # instance uuid -> [lock, holders and waiters]
        self._locks: dict[str, list] = {}

    @contextlib.contextmanager
    def hold(self, instance_uuid: str):
        """Hold the instance's lock for the ``with`` block."""
        with self._guard:
            entry = self._locks.setdefault(instance_uuid,
                                           [threading.RLock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    del self._locks[instance_uuid]

    def held(self) -> int:
        """How many instances have a lock now (for tests)."""
        with self._guard:
            return len(self._locks)
