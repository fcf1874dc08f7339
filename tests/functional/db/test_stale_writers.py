"""Writers acting on an ARQ that has moved on change nothing.

A bind's host work (an mdev, an FPGA's bitstream) finishes or fails
after the bind's transaction; the sweep claims binds it read as stuck; an
unbind or a delete reads the handle it releases. Between the read and
the write, the ARQ may have been unbound and its handle taken by another
ARQ. Each test arranges that interleaving on a real database and checks
the invariant: one attach handle is held by at most one ARQ, and a
handle is in use exactly when an ARQ holds it.

The interleavings inside one writer's transaction pause it after its
first statement (``tests.fixtures.databases.PausingDatabase``)
while another writer commits;
they run where writers do not queue on one lock (PostgreSQL, MySQL), as
SQLite's ``BEGIN IMMEDIATE`` makes them do.
"""

import datetime
import threading
import uuid

import pytest
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite import states
from cyborg_lite.conductor import arqs as conductor_arqs
from cyborg_lite.conductor import reports
from cyborg_lite.db import api as db_api
from cyborg_lite.db import binding
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from tests.fixtures import databases
from tests.functional.db.test_concurrent_bind import HOST
from tests.functional.db.test_concurrent_bind import _fpga

BITSTREAM = '11111111-1111-1111-1111-111111111111'
PROGRAMMED = [{'resources:FPGA': '1', 'accel:bitstream_id': BITSTREAM}]
PLAIN = [{'resources:FPGA': '1'}]


class _Notifier:
    def __init__(self):
        self.notified = []

    def notify(self, arqs, awaited=True):
        self.notified.extend(arqs)


class _Agents:
    """The hardware boundary: programs and mdevs succeed."""

    def __init__(self):
        self.programmed = []

    def program(self, host, deployable, bitstream):
        self.programmed.append((host, bitstream))

    def create_mdev(self, host, handle):
        pass

    def remove_mdev(self, host, handle):
        pass


@pytest.fixture
def system(db_url):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db = engine.Database(conf)
    migration.upgrade(db)
    reports.ReportService(db).report(HOST, [_fpga(1).to_dict()])
    db_api.device_profile_create(db, 'programmed', PROGRAMMED)
    db_api.device_profile_create(db, 'plain', PLAIN)
    notifier, agents = _Notifier(), _Agents()
    service = conductor_arqs.ArqService(conf, db, notifier, agents=agents)
    ctx = context.RequestContext(project_id='p1', roles=['member'],
                                 is_service=True)
    yield {'db': db, 'url': db_url, 'service': service, 'ctx': ctx,
           'notifier': notifier, 'agents': agents,
           'rp': reports.rp_uuid_of(HOST + '_0000:0c:00.0')}
    db.dispose()


def _fields(system, instance=None):
    return {'hostname': HOST, 'device_rp_uuid': system['rp'],
            'instance_uuid': instance or str(uuid.uuid4()),
            'project_id': 'p1'}


def _create(system, profile):
    arq, = db_api.arq_create(system['db'], profile, None, 'p1')
    return arq['uuid']


def _holders(system):
    """({arq uuid: (state, handle id)}, {handle id: in use})."""
    with system['db'].engine.connect() as conn:
        arqs = conn.execute(sa.select(
            db_api.ARQS.c.uuid, db_api.ARQS.c.state,
            db_api.ARQS.c.attach_handle_id)).all()
        handles = conn.execute(sa.select(db_api.HANDLES.c.id,
                                         db_api.HANDLES.c.in_use)).all()
    return ({a.uuid: (a.state, a.attach_handle_id) for a in arqs},
            {h.id: bool(h.in_use) for h in handles})


def _assert_one_holder_each(system):
    arqs, handles = _holders(system)
    held = [h for _, h in arqs.values() if h is not None]
    assert len(held) == len(set(held)), arqs
    assert {h for h, in_use in handles.items() if in_use} == set(held), (
        arqs, handles)


def _taken_over(system, first, profile='plain'):
    """``first`` (BindStarted, programming) is unbound and a second ARQ
    takes its handle, the deployable's only one; the second's uuid."""
    system['service'].unbind(system['ctx'], [first])
    second = _create(system, profile)
    binding.bind(system['db'], second, _fields(system), None, [second])
    return second


def test_a_late_programming_thread_leaves_a_rebound_handle(system):
    """The programming of a bind that was unbound meanwhile, and whose
    handle went to another ARQ, neither fails the first ARQ (Unbound
    stays Unbound) nor releases the second's handle."""
    db = system['db']
    first = _create(system, 'programmed')
    fields = _fields(system)
    started = binding.bind(db, first, fields, None, [first])
    assert started.arq['state'] == states.BIND_STARTED
    second = _taken_over(system, first)
    # The thread that bind() would have started, run to its end now.
    system['service']._program_and_finish(
        system['ctx'], first, fields, BITSTREAM, started.handle['id'])
    arqs, _ = _holders(system)
    assert arqs[first] == (states.UNBOUND, None)
    assert arqs[second] == (states.BOUND, started.handle['id'])
    assert not [a for a in system['notifier'].notified
                if a['state'] in states.RESOLVED]
    _assert_one_holder_each(system)
    # The first ARQ can be bound again (no handle is free: it fails).
    with pytest.raises(exception.Conflict):
        system['service'].bind(system['ctx'], {first: _fields(system)})


def test_stale_finish_and_failure_change_nothing(system):
    db = system['db']
    first = _create(system, 'programmed')
    started = binding.bind(db, first, _fields(system), None, [first])
    handle = started.handle['id']
    second = _taken_over(system, first, profile='programmed')
    assert not binding.finish_bind(db, first, handle)
    assert not binding.fail_bind(db, first, {states.BIND_STARTED},
                                 handle_id=handle)
    assert not binding.keep_bind_fresh(db, first, handle)
    assert not binding.leave_bind(db, first, handle)
    # The sweep's claim of a bind that is not stuck after all.
    long_ago = db_api.arq_get(db, second)['created_at']
    assert binding.claim_stuck_bind(db, second, _parse(long_ago)) is None
    arqs, _ = _holders(system)
    assert arqs[first] == (states.UNBOUND, None)
    assert arqs[second] == (states.BIND_STARTED, handle)
    _assert_one_holder_each(system)
    assert binding.finish_bind(db, second, handle)
    assert _holders(system)[0][second] == (states.BOUND, handle)


def _parse(isotime):
    """A naive UTC datetime, as the columns hold, from the wire form."""
    return datetime.datetime.fromisoformat(isotime).replace(tzinfo=None)


def test_a_bad_arq_in_a_batch_leaves_the_others_bound_and_told(system):
    """A bind of several ARQs tries them all: one that cannot be bound
    (deleted meanwhile) is refused, the others are bound and Nova hears
    of them."""
    db = system['db']
    kept, gone = (a['uuid'] for a in db_api.arq_create(db, 'plain', None,
                                                      'p1') +
                  db_api.arq_create(db, 'plain', None, 'p1'))
    db_api.arq_delete(db, lambda held: None, uuids=[gone])
    instance = str(uuid.uuid4())
    with pytest.raises(exception.ARQNotFound):
        system['service'].bind(system['ctx'], {
            gone: _fields(system, instance),
            kept: _fields(system, instance)})
    assert db_api.arq_get(db, kept)['state'] == states.BOUND
    assert [a['uuid'] for a in system['notifier'].notified] == [kept]


def test_a_repeated_bind_finishes_what_its_first_attempt_started(system):
    """The first attempt's transaction left the ARQ BindStarted and its
    conductor was lost before programming: the repeat programs and
    finishes the bind, and Nova hears of it."""
    db = system['db']
    arq = _create(system, 'programmed')
    fields = _fields(system)
    binding.bind(db, arq, fields, None, [arq])
    system['service'].bind(system['ctx'], {arq: fields}, repeat=True)
    for thread in threading.enumerate():
        if thread.name == 'program-' + arq:
            thread.join(timeout=30)
    assert db_api.arq_get(db, arq)['state'] == states.BOUND
    assert system['agents'].programmed == [(HOST, BITSTREAM)]
    assert [(a['uuid'], a['state']) for a in system['notifier'].notified] \
        == [(arq, states.BOUND)]
    _assert_one_holder_each(system)


def _interleave(system, writer, meanwhile):
    """Run ``writer(pausing db)`` in a thread, paused after its first
    statement while ``meanwhile()`` commits; ``writer``'s result."""
    if system['url'].startswith('sqlite'):
        pytest.skip('SQLite writers queue on one lock: nothing runs '
                    'between a writer\'s statements')
    pausing = databases.PausingDatabase(system['db'])
    result = {}
    thread = threading.Thread(
        target=lambda: result.setdefault('value', writer(pausing)))
    thread.start()
    assert pausing.paused.wait(30)
    try:
        meanwhile()
    finally:
        pausing.resume.set()
        thread.join(30)
    return result['value']


def _bound(system, profile):
    """A new ARQ of ``profile`` bound (Bound, or BindStarted when it
    programs) on the deployable's only handle: (its uuid, the handle)."""
    first = _create(system, profile)
    binding.bind(system['db'], first, _fields(system), None, [first])
    return first, _holders(system)[0][first][1]


def _assert_taken(system, first, first_row, second, handle):
    """``first`` ends as ``first_row`` (None: deleted), ``second`` Bound
    on ``handle``, and each handle has one holder at most."""
    arqs, _ = _holders(system)
    assert arqs.get(first) == first_row
    assert arqs[second] == (states.BOUND, handle)
    _assert_one_holder_each(system)


def test_a_sweep_that_read_a_bind_before_its_unbind(system):
    """The sweep reads a stuck bind, the ARQ is unbound and its handle
    goes to another ARQ, then the sweep claims it: nothing changes, and
    the other ARQ is not claimed in its place."""
    db = system['db']
    first, handle = _bound(system, 'programmed')
    assert binding.leave_bind(db, first, handle)
    cutoff = datetime.datetime.utcnow() - datetime.timedelta(seconds=60)
    assert [a['uuid'] for a in db_api.arqs_stuck(db, cutoff)] == [first]
    second = _taken_over(system, first)
    assert binding.claim_stuck_bind(db, first, cutoff) is None
    _assert_taken(system, first, (states.UNBOUND, None), second, handle)


def test_two_sweeps_claim_a_stuck_bind_once(system):
    """Two conductors' sweeps read the same stuck bind: one claims it
    (and does its host work), the other finds it claimed."""
    db = system['db']
    first, handle = _bound(system, 'programmed')
    assert binding.leave_bind(db, first, handle)
    cutoff = datetime.datetime.utcnow() - datetime.timedelta(seconds=60)
    claims = [binding.claim_stuck_bind(db, first, cutoff)
              for _ in range(2)]
    assert claims[0][0]['id'] == handle and claims[0][1] == BITSTREAM
    assert claims[1] is None
    assert _holders(system)[0][first] == (states.BIND_STARTED, handle)
    _assert_one_holder_each(system)


def test_an_unbind_that_read_a_handle_the_sweep_released(system):
    """An unbind reads a BindStarted ARQ and its handle; the sweep fails
    the bind and another ARQ takes the handle; the unbind then moves
    the ARQ to Unbound and releases nothing."""
    db = system['db']
    first, handle = _bound(system, 'programmed')
    holder = {}

    def meanwhile():
        assert binding.fail_bind(db, first, {states.BIND_STARTED})
        holder['second'] = _create(system, 'plain')
        binding.bind(db, holder['second'], _fields(system), None,
                     [holder['second']])

    _interleave(system, lambda pausing: binding.unbind(pausing, first, None),
                meanwhile)
    _assert_taken(system, first, (states.UNBOUND, None), holder['second'],
                  handle)


def test_a_delete_that_read_a_handle_the_arq_lost(system):
    """A delete reads an ARQ and its handle; the ARQ is unbound, its
    handle taken by another and the ARQ bound again (no handle left: it
    fails); the delete then starts again and releases nothing of the
    other's."""
    first, handle = _bound(system, 'plain')
    holder = {}

    def meanwhile():
        holder['second'] = _taken_over(system, first)

    _interleave(system, lambda pausing: db_api.arq_delete(
        pausing, lambda held: None, uuids=[first]), meanwhile)
    _assert_taken(system, first, None, holder['second'], handle)


def test_a_finish_whose_commit_answer_is_lost_says_it_finished(system):
    """The retry finds the ARQ Bound by its own commit: True, so that
    the conductor keeps the mdev (False would remove it)."""
    first, handle = _bound(system, 'programmed')
    losing = databases.LosingCommitDatabase(system['db'])
    assert binding.finish_bind(losing, first, handle)
    assert _holders(system)[0][first] == (states.BOUND, handle)


def test_a_finish_another_conductor_made_counts_as_finished(system):
    """A repeated bind's conductor finished the bind first: the first
    conductor's finish is True too, and it keeps the mdev."""
    first, handle = _bound(system, 'programmed')
    assert binding.finish_bind(system['db'], first, handle)
    assert binding.finish_bind(system['db'], first, handle)
    assert not binding.finish_bind(system['db'], first, handle + 1)


def test_a_failure_whose_commit_answer_is_lost_says_it_failed(system):
    """A failure of a bind's host work committed, its answer lost: the
    retry says the ARQ was failed, so that Nova hears of it."""
    first, _handle = _bound(system, 'programmed')
    losing = databases.LosingCommitDatabase(system['db'])
    assert binding.fail_bind(losing, first, {states.BIND_STARTED})
    assert _holders(system)[0][first] == (states.BIND_FAILED, None)
    _assert_one_holder_each(system)


def test_a_delete_whose_commit_answer_is_lost_is_no_404(system):
    """DELETE ?arqs= whose commit's answer was lost: the retry finds
    nothing, and the delete succeeded (no ARQNotFound)."""
    first, _handle = _bound(system, 'plain')

    def check(held):
        if not held:
            raise exception.ARQNotFound(uuid=first)

    losing = databases.LosingCommitDatabase(system['db'])
    done = db_api.arq_delete(losing, check, uuids=[first])
    assert done.deleted
    assert first not in _holders(system)[0]
    _assert_one_holder_each(system)
