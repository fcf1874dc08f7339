"""Power states of a guest, with Nova's values."""

import enum


class PowerState(enum.IntEnum):
    NOSTATE = 0
    RUNNING = 1
    PAUSED = 3
    SHUTDOWN = 4  # shut off, or shutting down
    CRASHED = 6
    SUSPENDED = 7
