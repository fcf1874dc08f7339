"""Program requests (cyborg_lite.db.programs) on a real database: the
first of a conductor's start and an API's abandon to write a request
decides it, whatever the interleaving, and a conductor's beats and end
are recorded only while the request is under way. SQLite, PostgreSQL
and MariaDB/MySQL, two database handles as two processes would have."""

import datetime
import threading
import uuid

from oslo_utils import timeutils
import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite import states
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import programs

DEPLOYABLE = str(uuid.uuid4())
IMAGE = str(uuid.uuid4())


@pytest.fixture
def dbs(db_url):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    handles = [engine.Database(conf) for _ in range(2)]
    migration.upgrade(handles[0])
    yield handles
    for db in handles:
        db.dispose()


def _start(db, request_id):
    return programs.start(db, request_id, DEPLOYABLE, IMAGE)


def test_a_started_request_is_not_abandoned_nor_started_again(dbs):
    request_id = str(uuid.uuid4())
    assert _start(dbs[0], request_id) == (states.PROGRAMMING, True)
    # A repeat of the start (its first answer lost) starts nothing.
    assert _start(dbs[1], request_id) == (states.PROGRAMMING, False)
    assert programs.abandon(dbs[1], request_id) == states.PROGRAMMING
    assert programs.get(dbs[0], request_id) == {
        'state': states.PROGRAMMING, 'beats': 0, 'error': None,
        'deployable_uuid': DEPLOYABLE}


def test_an_abandoned_request_is_never_started(dbs):
    request_id = str(uuid.uuid4())
    assert programs.abandon(dbs[0], request_id) == states.PROGRAM_ABANDONED
    assert programs.abandon(dbs[1], request_id) == states.PROGRAM_ABANDONED
    assert _start(dbs[1], request_id) == (states.PROGRAM_ABANDONED, False)
    assert programs.get(dbs[0], request_id)['state'] == \
        states.PROGRAM_ABANDONED
    assert not programs.beat(dbs[1], request_id)


def _race(dbs, request_id):
    """A conductor's start and an API's abandon of one request, from two
    threads on two handles at once: what each answered."""
    answers = {}
    gate = threading.Barrier(2)

    def start():
        gate.wait()
        answers['start'] = _start(dbs[0], request_id)

    def abandon():
        gate.wait()
        answers['abandon'] = programs.abandon(dbs[1], request_id)

    threads = [threading.Thread(target=start),
               threading.Thread(target=abandon)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_start_and_abandon_at_once_one_wins(dbs):
    """Each round, exactly one of the two writes the request, and both
    answer the state that the winner wrote."""
    for _ in range(30):
        request_id = str(uuid.uuid4())
        answers = _race(dbs, request_id)
        state, started = answers['start']
        assert answers['abandon'] == state
        assert started == (state == states.PROGRAMMING)
        assert programs.get(dbs[0], request_id)['state'] == state


def test_beats_and_the_end_only_while_programming(dbs):
    request_id = str(uuid.uuid4())
    _start(dbs[0], request_id)
    assert programs.beat(dbs[0], request_id)
    assert programs.beat(dbs[0], request_id)
    assert programs.get(dbs[1], request_id)['beats'] == 2
    programs.finish(dbs[0], request_id)
    assert programs.get(dbs[1], request_id)['state'] == states.PROGRAMMED
    assert not programs.beat(dbs[0], request_id)
    # An end recorded twice keeps the first.
    programs.finish(dbs[0], request_id, error='late')
    assert programs.get(dbs[1], request_id) == {
        'state': states.PROGRAMMED, 'beats': 2, 'error': None,
        'deployable_uuid': DEPLOYABLE}


def test_a_failed_programming_keeps_its_error(dbs):
    request_id = str(uuid.uuid4())
    _start(dbs[0], request_id)
    programs.finish(dbs[0], request_id, error='Host work on h failed: x')
    found = programs.get(dbs[1], request_id)
    assert found['state'] == states.PROGRAM_FAILED
    assert found['error'] == 'Host work on h failed: x'


def test_old_requests_are_forgotten(dbs):
    old, new = str(uuid.uuid4()), str(uuid.uuid4())
    _start(dbs[0], old)
    programs.finish(dbs[0], old)
    _start(dbs[0], new)
    assert programs.forget_old(dbs[0]) == 0
    # A day after their last change, finished or not, both go.
    later = timeutils.utcnow() + datetime.timedelta(
        seconds=programs.KEPT_FOR + 60)
    assert programs.forget_old(dbs[1], now=later) == 2
    assert programs.get(dbs[0], old) is None
    assert programs.get(dbs[0], new) is None
    assert programs.get(dbs[0], str(uuid.uuid4())) is None
