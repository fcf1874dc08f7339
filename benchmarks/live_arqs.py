"""Does the lifecycle slow down when the table holds many live ARQs?

``python -m benchmarks --topology production --only live-arqs
[--live-arqs 100000]``: in one deployment, the lifecycle's sequential and
8-client runs on an empty table, then with ``--live-arqs`` ARQs of other
instances in it, then on an empty table again, so that a drift of the
machine during the run shows as the difference of the two empty runs.

The live ARQs are what a region's other instances hold: Bound, each to
its own instance in its own project, each with its own attach handle
(in use) of a deployable on a host that no agent reports, written
straight into the database in batches (through the API they would take
longer than the measurement). They are removed again before the last
run.
"""

import datetime
import uuid

import sqlalchemy as sa

from benchmarks import lifecycle
from cyborg_lite.db import models

HOST = 'bench-other-instances'
BATCH = 5000


def _handles(count, deployable_id, cpid_id):
    return [{'uuid': str(uuid.uuid4()), 'deployable_id': deployable_id,
             'cpid_id': cpid_id, 'in_use': True, 'attach_type': 'PCI',
             'attach_info': '{"n": %d}' % n} for n in range(count)]


def _arqs(handle_ids, deployable_id, profile_id):
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    arqs = []
    for n, handle_id in enumerate(handle_ids):
        instance = str(uuid.uuid4())
        arqs.append({'uuid': str(uuid.uuid4()),
                     'project_id': 'bench-project-%d' % (n % 1000),
                     'state': 'Bound', 'device_profile_id': profile_id,
                     'device_profile_group_id': 0, 'hostname': HOST,
                     'device_rp_uuid': str(uuid.uuid4()),
                     'instance_uuid': instance, 'instance_claim': instance,
                     'attach_handle_id': handle_id,
                     'deployable_id': deployable_id,
                     'created_at': now, 'updated_at': now})
    return arqs


def fill(db_url, count, profile_name):
    """Write ``count`` Bound ARQs of other instances."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            profile_id = conn.execute(sa.select(models.DeviceProfile.id).where(
                models.DeviceProfile.name == profile_name)).scalar_one()
            device_id = conn.execute(sa.insert(models.Device).values(
                uuid=str(uuid.uuid4()), type='FPGA', vendor='0xABCD',
                model='bench', hostname=HOST, status='enabled',
                vanished=False).returning(models.Device.id)).scalar_one()
            deployable_id = conn.execute(sa.insert(models.Deployable).values(
                uuid=str(uuid.uuid4()), name=HOST + '_fpga',
                num_accelerators=count, device_id=device_id,
                rp_uuid=str(uuid.uuid4()), driver_name='fake').returning(
                models.Deployable.id)).scalar_one()
            cpid_id = conn.execute(sa.insert(models.ControlpathID).values(
                uuid=str(uuid.uuid4()), device_id=device_id, cpid_type='PCI',
                cpid_info='{"bench": "other instances"}').returning(
                models.ControlpathID.id)).scalar_one()
        for start in range(0, count, BATCH):
            with engine.begin() as conn:
                handle_ids = conn.execute(
                    sa.insert(models.AttachHandle).returning(
                        models.AttachHandle.id,
                        sort_by_parameter_order=True),
                    _handles(min(BATCH, count - start), deployable_id,
                             cpid_id)).scalars().all()
                conn.execute(sa.insert(models.ExtArq),
                             _arqs(handle_ids, deployable_id, profile_id))
        with engine.begin() as conn:
            # As PostgreSQL's autovacuum would, in time: the planner
            # sees the table as it now is.
            if engine.dialect.name == 'postgresql':
                conn.execute(sa.text('ANALYZE'))
    finally:
        engine.dispose()


def empty(db_url):
    """Remove what ``fill`` wrote."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.delete(models.ExtArq).where(
                models.ExtArq.hostname == HOST))
            deployables = sa.select(models.Deployable.id).join(
                models.Device).where(models.Device.hostname == HOST)
            conn.execute(sa.delete(models.AttachHandle).where(
                models.AttachHandle.deployable_id.in_(deployables)))
            conn.execute(sa.delete(models.Deployable).where(
                models.Deployable.id.in_(deployables)))
            conn.execute(sa.delete(models.ControlpathID).where(
                models.ControlpathID.device_id.in_(
                    sa.select(models.Device.id).where(
                        models.Device.hostname == HOST))))
            conn.execute(sa.delete(models.Device).where(
                models.Device.hostname == HOST))
            if engine.dialect.name == 'postgresql':
                conn.execute(sa.text('ANALYZE'))
    finally:
        engine.dispose()


def _runs(url, profile, hostname, rp_uuid, duration):
    found = {}
    for concurrency in (1, 8):
        run = lifecycle.run(url, profile, hostname, rp_uuid, concurrency,
                            duration)
        found[concurrency] = {
            'throughput_per_s': run['throughput_per_s'],
            'errors': run['errors'],
            'p50_ms': run['steps_ms']['lifecycle']['p50'],
            'p95_ms': run['steps_ms']['lifecycle']['p95']}
    return found


def run(system, profile, hostname, rp_uuid, count, duration):
    """The three runs and, per concurrency, the full table's p50 as a
    multiple of the empty runs' mean (the target: at most 1.10)."""
    before = _runs(system.url, profile, hostname, rp_uuid, duration)
    fill(system.db_url, count, profile)
    try:
        full = _runs(system.url, profile, hostname, rp_uuid, duration)
    finally:
        empty(system.db_url)
    after = _runs(system.url, profile, hostname, rp_uuid, duration)
    ratios = {}
    for concurrency in (1, 8):
        base = (before[concurrency]['p50_ms'] +
                after[concurrency]['p50_ms']) / 2
        ratios[concurrency] = round(full[concurrency]['p50_ms'] / base, 3)
    return {'live_arqs': count, 'seconds_per_run': duration,
            'empty_before': before, 'full': full, 'empty_after': after,
            'p50_full_of_empty': ratios, 'target': 1.10,
            'met': all(r <= 1.10 for r in ratios.values()) and not any(
                r['errors'] for r in (*before.values(), *full.values(),
                                      *after.values()))}
