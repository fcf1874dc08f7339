"""What an agent report costs the conductor, as the fleet grows.

For 10, 100 and 1,000 simulated hosts with 8 devices each, through the
conductor's real report code, a real database (SQLite) and the placement
stub: each host's first report, an unchanged report, and a report with
one change per host (one device's handle count). For each: wall time
per report, and DB statements and Placement calls per report, split into
reads and writes. First reports are sent from 4 threads (they write
about 25 Placement objects each); the others from one.
"""

from concurrent import futures
import shutil
import tempfile
import time

from cyborg_lite import conf as cl_conf
from cyborg_lite import model
from cyborg_lite.allinone.hosts import register_compute_nodes
from cyborg_lite.conductor import placement
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import reports
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from placement_stub.fixture import PlacementFixture

DEVICES_PER_HOST = 8


def _device(host, n, handles=4):
    address = '0000:%02x:00.0' % (0x10 + n)
    infos = [model.canonical_json(model.pci_address_info(
        '0000:%02x:00.%d' % (0x10 + n, f))) for f in range(handles)]
    return model.DriverDevice(
        type='FPGA', vendor='0xABCD', model='BenchFPGA',
        controlpath_type='PCI', controlpath_info=infos[0],
        deployables=(model.DriverDeployable(
            name='%s_%s' % (host, address), num_accelerators=handles,
            driver_name='fake',
            attributes=(model.DriverAttribute('rc', 'FPGA'),
                        model.DriverAttribute('trait0', 'CUSTOM_BENCH')),
            attach_handles=tuple(model.DriverAttachHandle('PCI', i)
                                 for i in infos)),))


def _host_devices(host, changed=False):
    return [_device(host, n, handles=5 if changed and n == 0 else 4).to_dict()
            for n in range(DEVICES_PER_HOST)]


def _phase(service, db, client, hosts, changed, reporters=1):
    """Every host reports once, from ``reporters`` threads (conductors
    serve reports concurrently too)."""
    reads0, writes0 = db.counter.snapshot()
    calls0 = client.calls_read, client.calls_write
    started = time.perf_counter()
    with futures.ThreadPoolExecutor(reporters) as pool:
        list(pool.map(lambda host: service.report(
            host, _host_devices(host, changed)), hosts))
    elapsed = time.perf_counter() - started
    reads, writes = db.counter.snapshot()
    count = len(hosts)
    return {'reporters': reporters,
            'ms_per_report': round(elapsed / count * 1000, 2),
            'db_reads_per_report': round((reads - reads0) / count, 2),
            'db_writes_per_report': round((writes - writes0) / count, 2),
            'placement_reads_per_report': round(
                (client.calls_read - calls0[0]) / count, 2),
            'placement_writes_per_report': round(
                (client.calls_write - calls0[1]) / count, 2)}


def run(host_counts=(10, 100, 1000)):
    results = []
    for count in host_counts:
        tmp = tempfile.mkdtemp(prefix='cyborg-lite-reports-')
        with PlacementFixture() as fixture:
            conf = cl_conf.build_conf(overrides={
                ('database', 'connection'): 'sqlite:///%s/r.sqlite' % tmp,
                ('placement', 'auth_type'): 'none',
                ('placement', 'endpoint_override'): fixture.endpoint})
            db = engine.Database(conf)
            migration.upgrade(db)
            hosts = ['bench-host-%04d' % n for n in range(count)]
            register_compute_nodes(conf, hosts)
            client = placement.get_client(conf)
            service = reports.ReportService(
                db, placement_mirror.PlacementMirror(client))
            row = {'hosts': count, 'devices_per_host': DEVICES_PER_HOST,
                   # First reports write ~25 providers' worth to
                   # Placement each: spread them over 4 threads.
                   'first': _phase(service, db, client, hosts, False, 4),
                   'unchanged': _phase(service, db, client, hosts, False),
                   'one_change': _phase(service, db, client, hosts, True)}
            db.dispose()
        shutil.rmtree(tmp, ignore_errors=True)
        results.append(row)
    return results
