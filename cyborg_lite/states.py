"""ARQ states and the explicit table of allowed transitions.

The conductor uses ``TRANSITIONS`` as the ``WHERE state IN (...)``
guard of every compare-and-swap UPDATE of an ARQ's state, so that two
conductors racing on one ARQ cannot both win.
"""

INITIAL = 'Initial'
BIND_STARTED = 'BindStarted'
BOUND = 'Bound'
UNBOUND = 'Unbound'
BIND_FAILED = 'BindFailed'
DELETING = 'Deleting'

ALL_STATES = (INITIAL, BIND_STARTED, BOUND, UNBOUND, BIND_FAILED, DELETING)

# target state -> the states it may be entered from.
TRANSITIONS = {
    BIND_STARTED: frozenset({INITIAL, UNBOUND}),
    BOUND: frozenset({BIND_STARTED}),
    BIND_FAILED: frozenset({BIND_STARTED, BOUND}),
    UNBOUND: frozenset({INITIAL, BIND_STARTED, BOUND, BIND_FAILED}),
    DELETING: frozenset({INITIAL, BIND_STARTED, BOUND, UNBOUND,
                         BIND_FAILED}),
}

# States in which Nova considers a bind finished, one way or the other.
RESOLVED = frozenset({BOUND, BIND_FAILED, DELETING})

# What Nova's accelerator-request-bound event says for a resolved state.
EVENT_STATUS = {BOUND: 'completed', BIND_FAILED: 'failed',
                DELETING: 'failed'}


def allowed_sources(target: str) -> frozenset:
    """The states from which ``target`` may be entered."""
    return TRANSITIONS[target]


def can_transition(source: str, target: str) -> bool:
    return source in TRANSITIONS.get(target, ())

# The states of a program request (cyborg_lite.db.programs), an FPGA's
# programming asked through the API.
PROGRAMMING = 'programming'
PROGRAMMED = 'programmed'
PROGRAM_FAILED = 'failed'
PROGRAM_ABANDONED = 'abandoned'
PROGRAM_STATES = (PROGRAMMING, PROGRAMMED, PROGRAM_FAILED, PROGRAM_ABANDONED)
# Seconds between two beats of a conductor that programs: a caller that
# sees none for a while takes that conductor for lost.
PROGRAM_BEAT_INTERVAL = 1.0
