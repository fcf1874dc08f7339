"""Attach handles go to one ARQ each, however many binds race.

32 threads bind 32 ARQs at once against one deployable with 16 free
handles, through the conductor's bind code on a real database: exactly 16
end Bound, the other 16 BindFailed, and no handle is held twice. Run on
SQLite and on PostgreSQL, and with two conductors' worth of DB handles.
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
from tests.fixtures import databases

HOST = 'compute1.test'
HANDLES = 16
BINDERS = 32


class _Notifier:
    def __init__(self):
        self.notified = []
        self._lock = threading.Lock()

    def notify(self, arqs, awaited=True):
        with self._lock:
            self.notified.extend(arqs)


def _fpga(handles):
    infos = [model.canonical_json(model.pci_address_info(
        '0000:0c:%02x.%d' % (n // 8, n % 8))) for n in range(handles)]
    return model.DriverDevice(
        type='FPGA', vendor='0xABCD', model='FakeFPGA',
        controlpath_type='PCI', controlpath_info=infos[0],
        deployables=(model.DriverDeployable(
            name=HOST + '_0000:0c:00.0', num_accelerators=handles,
            driver_name='fake',
            attributes=(model.DriverAttribute('rc', 'FPGA'),),
            attach_handles=tuple(model.DriverAttachHandle('PCI', i)
                                 for i in infos)),))


def _services(url, count):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): url})
    dbs = [engine.Database(conf) for _ in range(count)]
    migration.upgrade(dbs[0])
    notifier = _Notifier()
    services = [conductor_arqs.ArqService(conf, db, notifier, agents=None)
                for db in dbs]
    return dbs, services, notifier


@pytest.mark.parametrize('conductors', [1, 2])
def test_32_binds_16_handles(db_url, conductors):
    dbs, services, notifier = _services(db_url, conductors)
    db = dbs[0]
    reports.ReportService(db).report(HOST, [_fpga(HANDLES).to_dict()])
    rp_uuid = reports.rp_uuid_of(HOST + '_0000:0c:00.0')
    db_api.device_profile_create(db, 'dp', [{'resources:FPGA': '1'}])
    ctx = context.RequestContext(project_id='p1', roles=['member'],
                                 is_service=True)
    arqs = db_api.arq_create(db, 'dp', [BINDERS], 'p1')
    barrier = threading.Barrier(BINDERS)
    outcomes = collections.Counter()

    def bind(i, arq):
        service = services[i % conductors]
        barrier.wait()
        try:
            service.bind(ctx, {arq['uuid']: {
                'hostname': HOST, 'device_rp_uuid': rp_uuid,
                'instance_uuid': str(uuid.uuid4())}})
            outcomes['ok'] += 1
        except Exception as exc:
            outcomes[type(exc).__name__] += 1

    threads = [threading.Thread(target=bind, args=(i, a))
               for i, a in enumerate(arqs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    final = db_api.arq_list(db)
    by_state = collections.Counter(a['state'] for a in final)
    assert by_state == {states.BOUND: HANDLES,
                        states.BIND_FAILED: BINDERS - HANDLES}
    assert outcomes == {'ok': HANDLES, 'Conflict': BINDERS - HANDLES}
    handles = [a['attach_handle_uuid'] for a in final
               if a['state'] == states.BOUND]
    assert len(set(handles)) == HANDLES
    with db.reader() as session:
        in_use = session.scalar(sa.select(sa.func.count()).where(
            models.AttachHandle.in_use.is_(True)))
        held = session.scalar(sa.select(sa.func.count(sa.distinct(
            models.ExtArq.attach_handle_id))).where(
            models.ExtArq.attach_handle_id.is_not(None)))
    assert in_use == held == HANDLES
    # Nova hears of every ARQ: 16 completed, 16 failed.
    statuses = collections.Counter(a['state'] for a in notifier.notified)
    assert statuses == {states.BOUND: HANDLES,
                        states.BIND_FAILED: BINDERS - HANDLES}
    for d in dbs:
        d.dispose()


def test_two_binds_of_different_arqs_to_one_instance(db_url):
    """Two binds, each of its own ARQ, to one instance at once: one binds,
    the other is refused (InstanceAlreadyBound), as when they come one
    after the other. The first bind is paused after its read, which saw
    no ARQ of the instance, while the second commits; its write then
    loses the instance's claim, and it runs again."""
    if db_url.startswith('sqlite'):
        pytest.skip('SQLite writers queue on one lock: nothing runs '
                    'between a writer\'s statements')
    dbs, _services_, _notifier = _services(db_url, 1)
    db = dbs[0]
    reports.ReportService(db).report(HOST, [_fpga(2).to_dict()])
    db_api.device_profile_create(db, 'dp', [{'resources:FPGA': '1'}])
    first, second = (a['uuid'] for a in db_api.arq_create(db, 'dp', [2],
                                                           'p1'))
    instance = str(uuid.uuid4())
    fields = {'hostname': HOST, 'instance_uuid': instance,
              'device_rp_uuid': reports.rp_uuid_of(HOST + '_0000:0c:00.0'),
              'project_id': 'p1'}
    pausing = databases.PausingDatabase(db)
    outcome = {}

    def bind_first():
        try:
            binding.bind(pausing, first, fields, None, [first])
            outcome['first'] = 'bound'
        except exception.InstanceAlreadyBound:
            outcome['first'] = 'refused'

    thread = threading.Thread(target=bind_first)
    thread.start()
    assert pausing.paused.wait(30)
    try:
        binding.bind(db, second, fields, None, [second])
    finally:
        pausing.resume.set()
        thread.join(30)
    assert outcome == {'first': 'refused'}
    states_now = {a['uuid']: a['state'] for a in db_api.arq_list(db)}
    assert states_now == {first: states.INITIAL, second: states.BOUND}
    db.dispose()
