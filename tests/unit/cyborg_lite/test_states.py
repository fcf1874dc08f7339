from cyborg_lite import states


def test_every_target_has_sources():
    for target, sources in states.TRANSITIONS.items():
        assert target in states.ALL_STATES
        assert sources <= set(states.ALL_STATES)


def test_bind_paths():
    assert states.can_transition(states.INITIAL, states.BIND_STARTED)
    assert states.can_transition(states.UNBOUND, states.BIND_STARTED)
    assert states.can_transition(states.BIND_STARTED, states.BOUND)
    assert not states.can_transition(states.INITIAL, states.BOUND)
    assert not states.can_transition(states.BOUND, states.BIND_STARTED)
    assert not states.can_transition(states.BOUND, states.BOUND)


def test_initial_is_never_a_target():
    assert states.INITIAL not in states.TRANSITIONS


def test_resolved_and_event_statuses():
    assert states.RESOLVED == {states.BOUND, states.BIND_FAILED,
                               states.DELETING}
    assert states.EVENT_STATUS[states.BOUND] == 'completed'
    assert states.EVENT_STATUS[states.BIND_FAILED] == 'failed'
