"""One programming at a time per device, shared by those who ask for it.

An FPGA takes one bitstream at a time, and a programming tool run twice
on one device at once either refuses the second run or leaves the device
in a state nobody asked for. Several callers may still ask for the same
device at the same time: the binds of several ARQs that share one FPGA
and one bitstream, or a bind the conductors' sweep took over while the
lost conductor's programming still runs here.

``DevicePrograms`` runs one programming per device at a time. A
caller that asks for the bitstream the device is being programmed with
joins that run and gets its outcome (success, or the same error); one
that asks for another bitstream waits until the device is free and then
runs its own. A caller that comes after a run has finished runs again:
the agent does not trust its memory of what a device holds, since
anything on the host may have programmed it since.
"""

import copy
import logging
import threading
from typing import Callable

LOG = logging.getLogger(__name__)


class _Run:
    """A programming of one device that is under way."""

    def __init__(self, bitstream: str) -> None:
        self.bitstream = bitstream
        self.done = threading.Event()
        self.error: Exception | None = None


class DevicePrograms:
    """Programmings of the host's devices, one per device at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}

    def program(self, device: str, bitstream: str,
                run: Callable[[], None]) -> None:
        """Have ``device`` programmed with ``bitstream``: call ``run``,
        or join the run under way with the same bitstream. Raises what
        the run raised."""
        while True:
            with self._lock:
                current = self._runs.get(device)
                if current is None:
                    mine = self._runs[device] = _Run(bitstream)
                    break
                if current.bitstream == bitstream:
                    mine = None
                    break
            LOG.info('%s is being programmed with %s; %s waits for it',
                     device, current.bitstream, bitstream)
            current.done.wait()
        if mine is None:
            LOG.info('%s is being programmed with %s already; joining '
                     'that run', device, bitstream)
            current.done.wait()
            if current.error is not None:
                # A copy: the run's own exception carries its thread's
                # traceback, which each raise would add to.
                raise copy.copy(current.error)
            return
        try:
            run()
        except Exception as exc:
            mine.error = exc
            raise
        finally:
            with self._lock:
                del self._runs[device]
            mine.done.set()
