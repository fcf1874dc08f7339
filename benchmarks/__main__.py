"""``python -m benchmarks`` (``tox -e bench``): print benchmark JSON.

    python -m benchmarks [--topology allinone|multiprocess|production]
                         [--http-server builtin|cheroot|wsgiref]
                         [--api-server gunicorn|uwsgi|waitress]
                         [--api-workers 2]
                         [--conductors 1] [--concurrency 1,8,32]
                         [--duration 10] [--live-arqs 10000]

It starts the system under test itself: the all-in-one in its own
process; ``multiprocess``, the production topology's processes on the
test set-up's PostgreSQL (fsync, synchronous_commit and full_page_writes
off), without Placement or Nova; or ``production``, the install guide's
production mode as deployed (PostgreSQL with default durability, the
placement stub under gunicorn, Nova events to nova-shim-compute, 16
handles per FPGA; see ``benchmarks.topology``). It drives the ARQ
lifecycle as Nova does at each concurrency, and reports throughput,
p50/p95/p99 per step and per lifecycle, errors, the CPU each process
group spent per lifecycle (``benchmarks.cpu``), the peak RSS of every
server process, and the machine's floor that day (``benchmarks.floor``).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import requests

from benchmarks import cpu
from benchmarks import floor
from benchmarks import lifecycle
from cyborg_lite import local_transport
from cyborg_lite.api import gunicorn_worker
from cyborg_lite.conf import api as api_conf

ADMIN = {'X-Roles': 'admin', 'X-Project-Id': 'bench'}


class RssSampler:
    """Samples the RSS of named processes; keeps the peak of each."""

    def __init__(self, pids):
        self.procs = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.peak = dict.fromkeys(pids, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.2):
            for name, proc in self.procs.items():
                try:
                    self.peak[name] = max(self.peak[name],
                                          proc.memory_info().rss)
                except psutil.Error:
                    pass

    def add(self, name, pid):
        """Sample one more process from now on."""
        self.procs = dict(self.procs, **{name: psutil.Process(pid)})
        self.peak.setdefault(name, 0)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return {name: round(rss / 2**20, 1) for name, rss in
                self.peak.items()}


class AllInOneProcess:
    """The all-in-one in a child process."""

    transport_url = local_transport.TRANSPORT_URL

    def __init__(self, handles, rpc_batch_size, http_server='builtin'):
        self.state_dir = tempfile.mkdtemp(prefix='cyborg-lite-bench-')
        self.handles = handles
        self.rpc_batch_size = rpc_batch_size
        self.http_server = http_server

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, '-m', 'benchmarks.allinone_server',
             '--state-dir', self.state_dir, '--handles', str(self.handles)]
            + ['--rpc-batch-size', str(self.rpc_batch_size)]
            + ['--http-server', self.http_server],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith('URL '):
            self.stop()
            raise RuntimeError('server did not start: %r' % line)
        self.url = line.split()[1]
        return self

    def server_pids(self):
        return {'allinone': self.proc.pid}

    def cpu_groups(self):
        """See ``benchmarks.cpu.CpuMeter``."""
        return {'all-in-one': ([self.proc.pid], False),
                'benchmark client': ([os.getpid()], False)}

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.state_dir, ignore_errors=True)


def _setup(url, live_arqs):
    http = requests.Session()
    http.headers.update(ADMIN)
    base = url + '/v2'
    http.post(base + '/device_profiles', json=[{
        'name': 'bench-fpga', 'groups': [{'resources:FPGA': '1'}]}])
    deployables = http.get(base + '/deployables').json()['deployables']
    fpga = next(d for d in deployables if '"FPGA"' in d['attributes_list'])
    hostname = fpga['name'].rsplit('_', 1)[0]
    if live_arqs:
        http.post(base + '/device_profiles', json=[{
            'name': 'bench-filler', 'groups': [{'resources:FPGA': '500'}]}])
        for _ in range(live_arqs // 500):
            http.post(base + '/accelerator_requests',
                      json={'device_profile_name': 'bench-filler'})
    return hostname, fpga['rp_uuid']


def _system(args, **extra):
    if args.topology == 'allinone':
        return AllInOneProcess(args.handles or 512, args.rpc_batch_size,
                               args.http_server), (
            'all-in-one (SQLite, in-process messaging, %s HTTP server)'
            % args.http_server)
    from benchmarks import topology
    worker = args.gunicorn_worker.rsplit('.', 1)[-1]
    api = 'gunicorn API (%d worker(s), %s)' % (args.api_workers, worker)
    if args.api_server == 'waitress':
        api = 'cyborg-lite-api (waitress, one process)'
    elif args.api_server == 'uwsgi':
        api = 'uWSGI API (%d process(es) of 8 threads)' % args.api_workers

    if args.topology == 'production':
        handles = args.handles or 16
        return (topology.ProductionTopology(
            conductors=args.conductors, handles=handles,
            rpc_batch_size=args.rpc_batch_size,
            worker_class=args.gunicorn_worker, api_server=args.api_server,
            api_workers=args.api_workers,
            events_per_request=args.nova_events_per_request,
            events_wait=args.nova_events_wait,
            resolved_events_wait=args.nova_resolved_events_wait, **extra),
            'production mode as deployed: %s, '
            '%d conductor(s), RabbitMQ, PostgreSQL with default durability, '
            'placement_stub under gunicorn (2 workers), Nova events to '
            'nova-shim-compute, %d handles per FPGA'
            % (api, args.conductors, handles))
    handles = args.handles or 512
    return (topology.Topology(conductors=args.conductors,
                              handles=handles,
                              rpc_batch_size=args.rpc_batch_size,
                              worker_class=args.gunicorn_worker,
                              api_workers=args.api_workers,
                              api_server=args.api_server),
            '%s, %d conductor(s), RabbitMQ, '
            'PostgreSQL with fsync, synchronous_commit and '
            'full_page_writes off, no Placement, no Nova events, '
            '%d handles' % (api, args.conductors, handles))


def bench_lifecycle(args):
    system, description = _system(args)
    system.start()
    sampler = RssSampler(system.server_pids())
    results = {'system': description, 'live_arqs': args.live_arqs,
               'rpc_batch_size': args.rpc_batch_size,
               'runs': []}
    try:
        hostname, rp_uuid = _setup(system.url, args.live_arqs)
        groups = system.cpu_groups()
        results['floor'] = floor.measure(
            system.url, system.transport_url,
            groups.get('api') or groups.get('all-in-one'))
        for concurrency in args.concurrency:
            results['runs'].append(lifecycle.run(
                system.url, 'bench-fpga', hostname, rp_uuid, concurrency,
                args.duration, meter=cpu.CpuMeter(groups)))
        results['against_floor'] = against_floor(results['floor'],
                                                 results['runs'])
    finally:
        results['peak_rss_mb'] = sampler.stop()
        system.stop()
    return results


# The targets of the production mode as deployed, against the floor
# measured in the same run: lifecycles per second at 8 clients at least
# this fraction of the floor's, the sequential p50 at most this
# multiple of the floor's.
TARGET_FRACTION_AT_8 = 0.85
TARGET_SEQUENTIAL_MULTIPLE = 1.25


def against_floor(floor_result, runs):
    """The runs against the floor of the same run: for 8 clients,
    throughput as a fraction of ``most_lifecycles_per_s``; for one, the
    lifecycle's p50 as a multiple of ``sequential_ms``; each with its
    target and whether it is met (errors must be 0)."""
    bound = floor_result['lifecycle']
    found = {}
    for run in runs:
        if run['concurrency'] == 8:
            fraction = run['throughput_per_s'] / bound['most_lifecycles_per_s']
            found['throughput_at_8_of_floor'] = {
                'value': round(fraction, 3), 'target': TARGET_FRACTION_AT_8,
                'met': fraction >= TARGET_FRACTION_AT_8 and not run['errors']}
        if run['concurrency'] == 1:
            p50 = run['steps_ms']['lifecycle']['p50']
            multiple = p50 / bound['sequential_ms'] if p50 else None
            found['sequential_p50_of_floor'] = {
                'value': round(multiple, 3) if multiple else None,
                'target': TARGET_SEQUENTIAL_MULTIPLE,
                'met': bool(multiple) and
                multiple <= TARGET_SEQUENTIAL_MULTIPLE and not run['errors']}
    return found


def bench_live_arqs(args):
    """The lifecycle with and without ``--live-arqs`` ARQs of other
    instances (``benchmarks.live_arqs``)."""
    from benchmarks import live_arqs
    system, description = _system(args)
    system.start()
    try:
        hostname, rp_uuid = _setup(system.url, 0)
        result = live_arqs.run(system, 'bench-fpga', hostname, rp_uuid,
                               args.live_arqs or 100000, args.duration)
    finally:
        system.stop()
    result['system'] = description
    return result


def bench_region(args):
    """A region's hosts reporting beside the lifecycle
    (``benchmarks.region``), with two conductors."""
    from benchmarks import region
    args.conductors = max(args.conductors, 2)
    system, description = _system(args)
    system.start()
    sampler = RssSampler(system.server_pids())
    try:
        hostname, rp_uuid = _setup(system.url, 0)
        result = region.run(system, 'bench-fpga', hostname, rp_uuid,
                            args.hosts, args.period, args.changed,
                            args.duration, args.baseline, sampler)
    finally:
        result_rss = sampler.stop()
        system.stop()
    result['peak_rss_mb'] = result_rss
    result['system'] = description
    return result


def bench_soak(args):
    """Hours of the lifecycle with faults (``benchmarks.soak``), on a
    RabbitMQ cluster."""
    from benchmarks import soak
    from tests.fixtures import rabbit_cluster
    args.conductors = max(args.conductors, 2)
    args.topology = 'production'
    cluster = soak.ensure_cluster()
    system, description = _system(args, rabbit_url=cluster.rabbit_url,
                                  messaging_options=rabbit_cluster.MESSAGING)
    system.start()
    try:
        hostname, rp_uuid = _setup(system.url, 0)
        result = soak.run(system, cluster, 'bench-fpga', hostname, rp_uuid,
                          args.minutes, args.fault_every)
    finally:
        system.stop()
    result['system'] = description + (
        ', RabbitMQ cluster of 3 nodes with quorum queues')
    return result


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='python -m benchmarks')
    parser.add_argument('--topology',
                        choices=['allinone', 'multiprocess', 'production'],
                        default='allinone',
                        help='multiprocess: the faster set-up (fsync off, '
                             'no Placement, no Nova); production: the '
                             'install guide\'s production mode as '
                             'deployed')
    parser.add_argument('--conductors', type=int, default=1)
    parser.add_argument('--concurrency', default='1,8,32',
                        type=lambda v: [int(c) for c in v.split(',')])
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--handles', type=int, default=None,
                        help='attach handles of the FPGA (default 16 for '
                             'production, else 512)')
    parser.add_argument('--rpc-batch-size', type=int,
                        default=api_conf.default('rpc_batch_size'),
                        help="the API's [api] rpc_batch_size")
    parser.add_argument('--gunicorn-worker',
                        default=gunicorn_worker.WORKER_CLASS,
                        help="the API's gunicorn worker class "
                             "(multiprocess topology), e.g. gthread")
    parser.add_argument('--api-workers', type=int, default=2,
                        help="the API's worker processes (gunicorn or "
                             "uWSGI)")
    parser.add_argument('--nova-events-per-request', type=int,
                        help="the conductors' [nova] events_per_request "
                             "(production topology; 1: one POST per ARQ)")
    parser.add_argument('--nova-events-wait', type=float,
                        help="the conductors' [nova] events_wait "
                             "(production topology; 0: no wait)")
    parser.add_argument('--nova-resolved-events-wait', type=float,
                        help="the conductors' [nova] resolved_events_wait "
                             "(production topology; 0: as events_wait)")
    parser.add_argument('--api-server', default='gunicorn',
                        choices=['gunicorn', 'uwsgi', 'waitress'],
                        help="the API's server in the multiprocess and "
                             "production topologies: gunicorn "
                             "(--gunicorn-worker), uWSGI (pyuwsgi, "
                             "--http11-socket) or cyborg-lite-api "
                             "(waitress, one process)")
    parser.add_argument('--http-server', default='builtin',
                        choices=['builtin', 'cheroot', 'wsgiref'],
                        help="the all-in-one API's HTTP server: the "
                             "built-in one or another candidate of "
                             "benchmarks.http_servers")
    parser.add_argument('--live-arqs', type=int, default=0,
                        help='ARQs of other instances in the table first')
    parser.add_argument('--report-hosts', default='10,100,1000',
                        type=lambda v: [int(c) for c in v.split(',') if c])
    parser.add_argument('--only', choices=['lifecycle', 'reports', 'build',
                                           'nova-events', 'api-cpu',
                                           'live-arqs', 'region', 'soak'])
    parser.add_argument('--hosts', type=int, default=10000,
                        help='simulated hosts of --only region')
    parser.add_argument('--period', type=float, default=60.0,
                        help="each simulated host's report interval "
                             "(--only region)")
    parser.add_argument('--changed', type=float, default=0.01,
                        help='the share of reports with a change '
                             '(--only region)')
    parser.add_argument('--baseline', type=float, default=60.0,
                        help='seconds of the lifecycle alone before the '
                             'fleet reports (--only region)')
    parser.add_argument('--minutes', type=float, default=60.0,
                        help='minutes of --only soak')
    parser.add_argument('--fault-every', type=float, default=10.0,
                        help='minutes between two faults (--only soak)')
    parser.add_argument('--chart', help='write a PNG of throughput and p95 '
                                        'latency against concurrency')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chart = None
    if args.chart:
        # Before the runs: a missing matplotlib fails now, not after them.
        from benchmarks import chart
    started = time.time()
    report = {'machine': {'cpus': os.cpu_count(),
                          'load_average': os.getloadavg()}}
    if args.only in (None, 'lifecycle'):
        report['lifecycle'] = bench_lifecycle(args)
        if chart is not None:
            chart.write(report['lifecycle'], args.chart)
    if args.only == 'live-arqs':
        report['live_arqs'] = bench_live_arqs(args)
    if args.only == 'region':
        report['region'] = bench_region(args)
    if args.only == 'soak':
        report['soak'] = bench_soak(args)
    if args.only in (None, 'reports'):
        from benchmarks import reports
        report['agent_reports'] = reports.run(args.report_hosts)
    if args.only in (None, 'build'):
        from benchmarks import build
        report['build_to_active'] = build.run()
    if args.only in (None, 'nova-events'):
        from benchmarks import nova_events
        report['nova_events'] = nova_events.run()
    if args.only in (None, 'api-cpu'):
        from benchmarks import api_cpu
        report['api_cpu'] = api_cpu.run()
    report['elapsed_s'] = round(time.time() - started, 1)
    print(json.dumps(report, indent=2))


if __name__ == '__main__':
    main()
