"""Two reports of one host at once apply one diff, never two.

Two conductors (each its own Database, as two processes have) apply the
same report of a host at the same moment, as when an agent sends again
after an RPC timeout and both copies are taken: the devices, deployables
and attach handles end as one report would leave them, and the second
report finds the host unchanged. Run on SQLite, PostgreSQL (both
drivers) and MySQL.
"""

import threading
import uuid

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite.conductor import arqs as conductor_arqs
from cyborg_lite.conductor import reports
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import models
from tests.fixtures import driver_devices

HOST = 'compute-reports.test'
TRIALS = 5


def _databases(url, count=2):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): url})
    dbs = [engine.Database(conf) for _ in range(count)]
    migration.upgrade(dbs[0])
    return conf, dbs


def _counts(db):
    with db.reader() as session:
        return tuple(session.scalar(sa.select(sa.func.count())
                                    .select_from(model))
                     for model in (models.Device, models.Deployable,
                                   models.AttachHandle))


def test_a_report_applied_twice_at_once_changes_the_host_once(db_url):
    conf, dbs = _databases(db_url)
    services = [reports.ReportService(db) for db in dbs]
    try:
        for trial in range(TRIALS):
            host = '%s-%d' % (HOST, trial)
            services[0].report(host, [driver_devices.fpga(
                host, handles=2).to_dict()])
            grown = [driver_devices.fpga(host, handles=4),
                     driver_devices.fpga(host, address='0000:6e:00.0')]
            barrier = threading.Barrier(2)
            summaries = []

            def report(service, host=host, grown=grown, barrier=barrier,
                       summaries=summaries):
                barrier.wait()
                summaries.append(service.report(
                    host, [d.to_dict() for d in grown]))

            threads = [threading.Thread(target=report, args=(s,))
                       for s in services]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert sorted(s['changed'] for s in summaries) == [False, True]
            with dbs[0].reader() as session:
                rows = session.execute(
                    sa.select(models.Deployable.name,
                              sa.func.count(models.AttachHandle.id))
                    .join(models.AttachHandle,
                          models.AttachHandle.deployable_id ==
                          models.Deployable.id)
                    .join(models.Device,
                          models.Device.id == models.Deployable.device_id)
                    .where(models.Device.hostname == host)
                    .group_by(models.Deployable.name)).all()
            assert sorted(rows) == [(host + '_0000:5e:00.0', 4),
                                    (host + '_0000:6e:00.0', 2)]
    finally:
        for db in dbs:
            db.dispose()


def test_a_failed_bind_does_not_keep_its_device(db_url):
    """An ARQ whose bind failed (here its FPGA's programming) holds
    neither handle nor deployable: the device it was bound to can leave
    the host's report."""
    conf, (db,) = _databases(db_url, count=1)
    service = reports.ReportService(db)
    gone = driver_devices.fpga(HOST, address='0000:6e:00.0', handles=1)
    kept = driver_devices.fpga(HOST)
    service.report(HOST, [kept.to_dict(), gone.to_dict()])
    db_api.device_profile_create(db, 'dp', [{
        'resources:FPGA': '1', 'accel:bitstream_id': str(uuid.uuid4())}])
    arqs = conductor_arqs.ArqService(conf, db, notifier=_Silent(),
                                     agents=_FailingAgents())
    ctx = context.RequestContext(project_id='p1', roles=['member'],
                                 is_service=True)
    arq, = db_api.arq_create(db, 'dp', None, 'p1')
    arqs.bind(ctx, {arq['uuid']: {
        'hostname': HOST, 'device_rp_uuid': reports.rp_uuid_of(
            HOST + '_0000:6e:00.0'),
        'instance_uuid': str(uuid.uuid4())}})
    for thread in threading.enumerate():
        if thread.name == 'program-' + arq['uuid']:
            thread.join(30)
    assert db_api.arq_get(db, arq['uuid'])['state'] == 'BindFailed'
    assert service.report(HOST, [kept.to_dict()])['removed'] == 1
    assert _counts(db) == (1, 1, 2)
    db.dispose()


class _Silent:
    def notify(self, arqs, awaited=True):
        pass


class _FailingAgents:
    def program(self, host, deployable, bitstream):
        raise RuntimeError('the bitstream does not fit')
