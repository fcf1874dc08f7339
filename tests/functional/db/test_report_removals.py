"""What a report removes while an ARQ holds it goes once the ARQ lets go.

A handle (a VF that SR-IOV no longer offers) that a report drops while an
ARQ holds it stays until the ARQ lets go; the next report, unchanged as
it is, then removes it, instead of the host's digest saying it was
already applied.
"""

import pytest
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import model
from cyborg_lite.conductor import inventory
from cyborg_lite.conductor import reports
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import models
from cyborg_lite.db import reports as db_reports
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


def _stale_diff(db, devices):
    """What a second conductor does before its write: the host's digest,
    the stored devices and the diff of a report against them."""
    digest = db_reports.get_digest(db, HOST)
    stored = db_reports.load_host(db, HOST)
    reported = [model.DriverDevice.from_dict(d.to_dict()) for d in devices]
    return digest, inventory.diff_host(stored, reported), reported


def _apply(db, digest, diff, reported):
    return db_reports.apply_diff(
        db, HOST, diff, model.report_digest(reported), reports.rp_uuid_of,
        reported_cpids=[d.controlpath_info for d in reported],
        diffed_digest=digest)


def test_a_report_diffed_while_pending_is_stale_once_another_applied(db_url):
    """While a held handle keeps the host pending, a report that another
    conductor applied after this one's diff was made makes it stale,
    though the host is pending before and after (each pending digest is
    new): the diff would be applied twice, its handles duplicated."""
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db = engine.Database(conf)
    migration.upgrade(db)
    service = reports.ReportService(db)
    service.report(HOST, [driver_devices.fpga(HOST, handles=4).to_dict()])
    _set_in_use(db, _handles(db)[3].id, True)
    service.report(HOST, [driver_devices.fpga(HOST, handles=2).to_dict()])
    grown = [driver_devices.fpga(HOST, handles=3)]
    stale = _stale_diff(db, grown)
    assert service.report(HOST, [d.to_dict() for d in grown])['changed']
    with pytest.raises(db_reports.StaleReport):
        _apply(db, *stale)
    with db.reader() as session:
        infos = list(session.scalars(sa.select(
            models.AttachHandle.attach_info)))
    assert len(infos) == len(set(infos)) == 4
    db.dispose()


def test_a_report_diffed_before_a_purge_is_stale(db_url):
    """A device that vanished while held and comes back: a report diffed
    while the DB still had it, applied after the ARQ's release purged
    it, would leave the host without it for good."""
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db = engine.Database(conf)
    migration.upgrade(db)
    service = reports.ReportService(db)
    card = driver_devices.fpga(HOST)
    other = driver_devices.fpga(HOST, address='0000:6e:00.0')
    service.report(HOST, [card.to_dict(), other.to_dict()])
    with db.writer() as session:
        session.execute(sa.update(models.AttachHandle).where(
            models.AttachHandle.attach_info.like('%6e%'))
            .values(in_use=True))
    assert service.report(HOST, [card.to_dict()])['vanished'] == 1
    with db.writer() as session:
        session.execute(sa.update(models.AttachHandle).values(in_use=False))
    stale = _stale_diff(db, [card, other])
    assert db_reports.purge_vanished(db)
    with pytest.raises(db_reports.StaleReport):
        _apply(db, *stale)
    # The report, diffed again, brings the device back.
    assert service.report(HOST, [card.to_dict(), other.to_dict()])[
        'added'] == 1
    assert len(db_reports.load_host(db, HOST)) == 2
    db.dispose()
