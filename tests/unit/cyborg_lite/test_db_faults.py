"""A conductor call that meets the database gone for a moment runs
again when repeating it is harmless, with the repeat's arguments."""

from oslo_db import exception as db_exc
import pytest
from sqlalchemy import exc as sa_exc

from cyborg_lite.conductor import db_faults


@db_faults.survive_restarts
class Calls:
    """Methods that fail ``faults`` times, then answer their kwargs."""

    def __init__(self, faults, error=None):
        self.faults = faults
        self.error = error or sa_exc.OperationalError(
            'SELECT 1', {}, Exception('terminating connection due to '
                                      'administrator command'))
        self.seen = []

    def _answer(self, ctx, **kwargs):
        self.seen.append(kwargs)
        if len(self.seen) <= self.faults:
            raise self.error
        return kwargs

    arq_bind = _answer
    arq_create = _answer
    attribute_create = _answer
    arq_get = _answer


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(db_faults, 'FIRST_PAUSE', 0.001)
    monkeypatch.setattr(db_faults, 'LAST_PAUSE', 0.001)


def test_a_bind_runs_again_as_a_repeat():
    calls = Calls(faults=2)
    assert calls.arq_bind(None, bindings={'a': {}}) == {
        'bindings': {'a': {}}, 'repeat': True}
    assert calls.seen[0] == {'bindings': {'a': {}}}


def test_a_create_runs_again_only_with_its_idempotency_key():
    calls = Calls(faults=1, error=db_exc.DBConnectionError())
    assert calls.arq_create(None, device_profile_name='dp',
                            idempotency_key='k')['idempotency_key'] == 'k'
    calls = Calls(faults=1, error=db_exc.DBConnectionError())
    with pytest.raises(db_exc.DBConnectionError):
        calls.arq_create(None, device_profile_name='dp')
    assert len(calls.seen) == 1


def test_a_write_whose_repeat_is_not_harmless_fails_at_once():
    calls = Calls(faults=1)
    with pytest.raises(sa_exc.OperationalError):
        calls.attribute_create(None, values={})
    assert len(calls.seen) == 1


def test_a_database_away_for_longer_fails_the_call(monkeypatch):
    monkeypatch.setattr(db_faults, 'WITHIN', 0.01)
    monkeypatch.setattr(db_faults, 'FIRST_PAUSE', 0.004)
    monkeypatch.setattr(db_faults, 'LAST_PAUSE', 0.004)
    calls = Calls(faults=1000)
    with pytest.raises(sa_exc.OperationalError):
        calls.arq_get(None, uuid='u')
    assert 1 < len(calls.seen) < 10


def test_the_manager_survives_restarts_for_each_repeatable_method():
    from cyborg_lite.conductor import manager
    from cyborg_lite.conductor import retries
    for name in retries.RETRIED:
        method = getattr(manager.ConductorManager, name, None)
        if method is not None:
            assert method.__code__ is \
                db_faults._again_after_faults(name, None).__code__, name


def test_the_drivers_own_operational_error_is_the_database_away():
    class OperationalError(Exception):
        """As psycopg and psycopg2 name theirs (DB-API)."""

    class AdminShutdown(OperationalError):
        pass

    assert db_faults.database_away(AdminShutdown('terminating connection'))
    assert db_faults.database_away(db_exc.DBConnectionError())
    assert not db_faults.database_away(ValueError('no'))
    calls = Calls(faults=1, error=AdminShutdown('terminating connection'))
    assert calls.arq_get(None, uuid='u') == {'uuid': 'u'}
