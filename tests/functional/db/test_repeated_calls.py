"""Conductor calls sent again after their first answer was lost are
harmless: an ARQ create repeated with its idempotency key makes no
second set of ARQs, a repeated bind of an ARQ bound (or being bound) as
asked succeeds without taking a second handle, and a repeated delete
takes the ARQs it cannot find for deleted. Through the conductor's code
on a real database: SQLite, PostgreSQL and MariaDB/MySQL, with one
conductor's database handle or two.
"""

import collections
import threading
import uuid

import pytest
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite import model
from cyborg_lite import states
from cyborg_lite.conductor import arqs as conductor_arqs
from cyborg_lite.conductor import reports
from cyborg_lite.db import api as db_api
from cyborg_lite.db import binding
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import models

HOST = 'compute1.test'
HANDLES = 2
BITSTREAM = str(uuid.uuid4())
PROJECT = 'p1'


class _Notifier:
    def __init__(self):
        self.notified = []

    def notify(self, arqs, awaited=True):
        self.notified.extend(arqs)


def _fpga(handles):
    infos = [model.canonical_json(model.pci_address_info(
        '0000:0c:00.%d' % n)) for n in range(handles)]
    return model.DriverDevice(
        type='FPGA', vendor='0xABCD', model='FakeFPGA',
        controlpath_type='PCI', controlpath_info=infos[0],
        deployables=(model.DriverDeployable(
            name=HOST + '_0000:0c:00.0', num_accelerators=handles,
            driver_name='fake',
            attributes=(model.DriverAttribute('rc', 'FPGA'),),
            attach_handles=tuple(model.DriverAttachHandle('PCI', i)
                                 for i in infos)),))


class Conductors:
    """Two conductors' database handles and ARQ services on one
    database, with an FPGA of two handles and three profiles."""

    def __init__(self, url):
        self.conf = cl_conf.build_conf(
            overrides={('database', 'connection'): url})
        self.dbs = [engine.Database(self.conf) for _ in range(2)]
        self.db = self.dbs[0]
        migration.upgrade(self.db)
        self.notifier = _Notifier()
        self.services = [conductor_arqs.ArqService(self.conf, db,
                                                   self.notifier, None)
                         for db in self.dbs]
        reports.ReportService(self.db).report(HOST, [_fpga(HANDLES)
                                                     .to_dict()])
        self.rp_uuid = reports.rp_uuid_of(HOST + '_0000:0c:00.0')
        db_api.device_profile_create(self.db, 'one',
                                     [{'resources:FPGA': '1'}])
        db_api.device_profile_create(self.db, 'two',
                                     [{'resources:FPGA': '1'},
                                      {'resources:FPGA': '1'}])
        db_api.device_profile_create(self.db, 'program', [{
            'resources:FPGA': '1', 'accel:bitstream_id': BITSTREAM}])
        self.ctx = context.RequestContext(project_id=PROJECT,
                                          roles=['member'], is_service=True)

    def fields(self, instance=None):
        return {'hostname': HOST, 'device_rp_uuid': self.rp_uuid,
                'instance_uuid': instance or str(uuid.uuid4()),
                'project_id': PROJECT}

    def arq_count(self):
        with self.db.reader() as session:
            return session.scalar(sa.select(sa.func.count(
                models.ExtArq.id)))

    def handles_in_use(self):
        with self.db.reader() as session:
            return session.scalar(sa.select(sa.func.count()).where(
                models.AttachHandle.in_use.is_(True)))

    def close(self):
        for db in self.dbs:
            db.dispose()


def _uuids(arqs):
    return [a['uuid'] for a in arqs]


@pytest.fixture
def conductors(db_url):
    c = Conductors(db_url)
    yield c
    c.close()


@pytest.mark.parametrize('profile, count', [('one', 1), ('two', 2)])
def test_a_repeated_create_answers_the_arqs_of_the_first(conductors,
                                                         profile, count):
    key = str(uuid.uuid4())
    first = db_api.arq_create(conductors.db, profile, None, PROJECT,
                              idempotency_key=key)
    # Again on the same conductor (which now knows the profile) and on
    # the other one.
    again = db_api.arq_create(conductors.db, profile, None, PROJECT,
                              idempotency_key=key)
    other = db_api.arq_create(conductors.dbs[1], profile, None, PROJECT,
                              idempotency_key=key)
    assert len(first) == count
    # The ARQs as stored (MySQL keeps no microseconds of created_at).
    stored = db_api.arq_list(conductors.db,
                             uuids=[a['uuid'] for a in first])
    assert _uuids(stored) == _uuids(first)
    assert again == other == stored
    assert conductors.arq_count() == count
    # Another key is another create.
    more = db_api.arq_create(conductors.db, profile, None, PROJECT,
                             idempotency_key=str(uuid.uuid4()))
    assert {a['uuid'] for a in more}.isdisjoint(a['uuid'] for a in first)
    assert conductors.arq_count() == 2 * count
    # The UUIDs look like any others.
    assert all(uuid.UUID(a['uuid']).version == 4 for a in first + more)


def test_a_repeat_answers_the_arqs_as_they_are_now(conductors):
    key = str(uuid.uuid4())
    [arq] = db_api.arq_create(conductors.db, 'one', None, PROJECT,
                              idempotency_key=key)
    binding.bind(conductors.db, arq['uuid'], conductors.fields(), None)
    [again] = db_api.arq_create(conductors.db, 'one', None, PROJECT,
                                idempotency_key=key)
    assert again['uuid'] == arq['uuid'] and again['state'] == states.BOUND


def test_a_key_of_another_project_creates_nothing(conductors):
    key = str(uuid.uuid4())
    db_api.arq_create(conductors.db, 'one', None, PROJECT,
                      idempotency_key=key)
    with pytest.raises(exception.Conflict):
        db_api.arq_create(conductors.dbs[1], 'one', None, 'p2',
                          idempotency_key=key)
    assert conductors.arq_count() == 1


def test_a_create_and_its_repeat_at_once_make_one_set(conductors):
    key = str(uuid.uuid4())
    barrier = threading.Barrier(2, timeout=30)
    answers = [None, None]

    def create(i):
        barrier.wait()
        answers[i] = db_api.arq_create(conductors.dbs[i], 'two', None,
                                       PROJECT, idempotency_key=key)

    threads = [threading.Thread(target=create, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert answers[0] is not None and answers[1] is not None
    assert _uuids(answers[0]) == _uuids(answers[1])
    assert conductors.arq_count() == 2


def test_a_repeated_bind_of_a_bound_arq_succeeds_as_it_is(conductors):
    [arq] = db_api.arq_create(conductors.db, 'one', None, PROJECT)
    fields = conductors.fields()
    first = binding.bind(conductors.db, arq['uuid'], fields, None)
    assert first.finished and not first.repeated
    again = binding.bind(conductors.dbs[1], arq['uuid'], fields, None,
                         repeat=True)
    assert again.repeated and again.finished
    assert again.previous_state == states.BOUND
    assert again.arq == db_api.arq_get(conductors.db, arq['uuid'])
    assert again.arq['attach_handle_uuid'] == \
        first.arq['attach_handle_uuid']
    assert conductors.handles_in_use() == 1
    # A bind that is not a repeat is refused, as before.
    with pytest.raises(exception.ARQBadState):
        binding.bind(conductors.db, arq['uuid'], fields, None)
    # So is a repeat that asks for another binding.
    with pytest.raises(exception.ARQBadState):
        binding.bind(conductors.db, arq['uuid'], conductors.fields(), None,
                     repeat=True)
    assert db_api.arq_get(conductors.db, arq['uuid']) == again.arq
    assert conductors.handles_in_use() == 1


def test_a_repeated_bind_of_an_arq_being_bound_leaves_it_to_the_first(
        conductors):
    # The deployable lacks the profile's bitstream: the bind stays
    # BindStarted while the agent programs it.
    [arq] = db_api.arq_create(conductors.db, 'program', None, PROJECT)
    fields = conductors.fields()
    first = binding.bind(conductors.db, arq['uuid'], fields, None)
    assert not first.finished
    again = binding.bind(conductors.db, arq['uuid'], fields, None,
                         repeat=True)
    assert again.repeated and not again.finished
    assert again.arq['state'] == states.BIND_STARTED
    assert conductors.handles_in_use() == 1


def test_a_repeated_bind_through_the_conductor_tells_nova_again(conductors):
    [arq] = db_api.arq_create(conductors.db, 'one', None, PROJECT)
    bindings = {arq['uuid']: conductors.fields()}
    conductors.services[0].bind(conductors.ctx, bindings)
    conductors.services[1].bind(conductors.ctx, bindings, repeat=True)
    told = [(a['uuid'], a['state']) for a in conductors.notifier.notified]
    # The first attempt may have died before telling Nova.
    assert told == [(arq['uuid'], states.BOUND)] * 2
    with pytest.raises(exception.Conflict):
        conductors.services[0].bind(conductors.ctx, bindings)


def test_binding_a_bound_arq_anew_keeps_its_binding(conductors):
    arqs = db_api.arq_create(conductors.db, 'one', [HANDLES], PROJECT)
    for arq in arqs:
        conductors.services[0].bind(conductors.ctx, {
            arq['uuid']: conductors.fields()})
    bound = db_api.arq_get(conductors.db, arqs[0]['uuid'])
    # Every handle is taken: the refusal must not fail the bound ARQ
    # (nor free its handle) on its way out.
    with pytest.raises(exception.Conflict):
        conductors.services[0].bind(conductors.ctx, {
            arqs[0]['uuid']: conductors.fields()})
    assert db_api.arq_get(conductors.db, arqs[0]['uuid']) == bound
    assert conductors.handles_in_use() == HANDLES


def test_a_repeated_delete_takes_what_is_gone_for_deleted(conductors):
    arqs = db_api.arq_create(conductors.db, 'one', [3], PROJECT)
    uuids = [a['uuid'] for a in arqs]
    service = conductors.services[0]
    conductors.services[1].bind(conductors.ctx, {
        uuids[0]: conductors.fields()})
    service.delete(conductors.ctx, uuids=uuids[:2])
    # The first attempt deleted two; its repeat asks for all three.
    service.delete(conductors.ctx, uuids=uuids, repeat=True)
    assert conductors.arq_count() == 0
    assert conductors.handles_in_use() == 0
    service.delete(conductors.ctx, uuids=uuids, repeat=True)
    # A delete that is not a repeat still says what it cannot find.
    with pytest.raises(exception.ARQNotFound):
        service.delete(conductors.ctx, uuids=uuids[:1])


def test_repeats_leave_the_invariants(conductors):
    """Creates, binds and deletes each sent twice, on both conductors:
    one ARQ per create, one handle per Bound ARQ, nothing left."""
    outcomes = collections.Counter()
    for _ in range(4):
        key = str(uuid.uuid4())
        created = [db_api.arq_create(db, 'one', None, PROJECT,
                                     idempotency_key=key)
                   for db in conductors.dbs]
        assert _uuids(created[0]) == _uuids(created[1])
        [arq] = created[0]
        instance = str(uuid.uuid4())
        bindings = {arq['uuid']: conductors.fields(instance)}
        for repeat, service in zip((False, True), conductors.services,
                                   strict=True):
            service.bind(conductors.ctx, bindings, repeat=repeat)
        outcomes[db_api.arq_get(conductors.db, arq['uuid'])['state']] += 1
        assert conductors.handles_in_use() == 1
        for repeat, service in zip((False, True), conductors.services,
                                   strict=True):
            service.delete(conductors.ctx, instance_uuid=instance,
                           repeat=repeat)
        assert conductors.arq_count() == 0
        assert conductors.handles_in_use() == 0
    assert outcomes == {states.BOUND: 4}
