"""``python -m benchmarks`` (``tox -e bench``): print benchmark JSON.

    python -m benchmarks [--concurrency 1,8,32] [--duration 10]
                         [--live-arqs 10000] [--only lifecycle]

It starts the system under test itself (the all-in-one in its own
process, SQLite and in-process messaging), drives the ARQ lifecycle as
Nova does at each concurrency, and reports throughput, p50/p95/p99 per
step and per lifecycle, errors and the peak RSS of the server.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import requests

from benchmarks import lifecycle

ADMIN = {'X-Roles': 'admin', 'X-Project-Id': 'bench'}


class ServerProcess:
    """The system under test in a child process; samples its RSS."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line.startswith('URL '):
            raise RuntimeError('server did not start: %r' % line)
        self.url = line.split()[1]
        self.peak_rss = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self):
        ps = psutil.Process(self.proc.pid)
        while not self._stop.wait(0.2):
            try:
                rss = ps.memory_info().rss
            except psutil.Error:
                return
            self.peak_rss = max(self.peak_rss, rss)

    def stop(self):
        self._stop.set()
        self.proc.terminate()
        self.proc.wait(timeout=30)


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


def bench_lifecycle(args):
    state_dir = tempfile.mkdtemp(prefix='cyborg-lite-bench-')
    server = ServerProcess([sys.executable, '-m',
                            'benchmarks.allinone_server', '--state-dir',
                            state_dir, '--handles', str(args.handles)])
    results = {'system': 'all-in-one (SQLite, in-process messaging)',
               'live_arqs': args.live_arqs, 'runs': []}
    try:
        hostname, rp_uuid = _setup(server.url, args.live_arqs)
        for concurrency in args.concurrency:
            results['runs'].append(lifecycle.run(
                server.url, 'bench-fpga', hostname, rp_uuid, concurrency,
                args.duration))
    finally:
        server.stop()
    results['peak_rss_mb'] = {'allinone': round(server.peak_rss / 2**20, 1)}
    return results


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='python -m benchmarks')
    parser.add_argument('--concurrency', default='1,8,32',
                        type=lambda v: [int(c) for c in v.split(',')])
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--handles', type=int, default=512)
    parser.add_argument('--live-arqs', type=int, default=0)
    parser.add_argument('--only', choices=['lifecycle'], default=None)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.time()
    report = {'machine': {'cpus': os.cpu_count()},
              'lifecycle': bench_lifecycle(args)}
    report['elapsed_s'] = round(time.time() - started, 1)
    print(json.dumps(report, indent=2))


if __name__ == '__main__':
    main()
