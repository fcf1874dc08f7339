"""What a report removes while an ARQ holds it goes once the ARQ lets go.

A handle (a VF that SR-IOV no longer offers) that a report drops while an
ARQ holds it stays until the ARQ lets go; the next report, unchanged as
it is, then removes it, instead of the host's digest saying it was
already applied.
"""

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.conductor import reports
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import models
from tests.fixtures import driver_devices

HOST = 'compute-removals.test'


def _handles(db):
    with db.reader() as session:
        return session.execute(sa.select(models.AttachHandle.id,
                                         models.AttachHandle.in_use)
                               .order_by(models.AttachHandle.id)).all()


def _set_in_use(db, handle_id, in_use):
    with db.writer() as session:
        session.execute(sa.update(models.AttachHandle)
                        .where(models.AttachHandle.id == handle_id)
                        .values(in_use=in_use))


def test_a_handle_dropped_while_held_goes_at_the_next_report(db_url):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db = engine.Database(conf)
    migration.upgrade(db)
    service = reports.ReportService(db)
    service.report(HOST, [driver_devices.fpga(HOST, handles=4).to_dict()])
    held = _handles(db)[3].id
    _set_in_use(db, held, True)
    shrunk = [driver_devices.fpga(HOST, handles=2).to_dict()]
    assert service.report(HOST, shrunk)['changed']
    assert [h.id for h in _handles(db)][2:] == [held]
    # Held still: the same report changes nothing more.
    service.report(HOST, shrunk)
    assert [h.id for h in _handles(db)][2:] == [held]
    _set_in_use(db, held, False)
    service.report(HOST, shrunk)
    assert len(_handles(db)) == 2
    assert service.report(HOST, shrunk) == {'changed': False}
    db.dispose()
