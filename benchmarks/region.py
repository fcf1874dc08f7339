"""A region's worth of hosts reporting while Nova drives the lifecycle.

``python -m benchmarks --topology production --only region --hosts N
[--period 60] [--changed 0.01] [--duration 600] [--baseline 60]``

In the production mode as deployed, with two conductors: the
lifecycle's 8-client p50 and p95 alone (``--baseline`` seconds); then N
simulated hosts (``benchmarks.fleet``: the agent's own report code over
RabbitMQ, 8 FPGAs each) get their compute-node providers, register from
an empty database (timed), report back to back unchanged and then
changed (what each report costs the conductors in CPU, and in DB
writes and Placement calls), and last report every ``--period`` seconds
(``--changed`` of them with a change) for ``--duration`` seconds while
8 clients run the lifecycle beside them. Peak RSS of every process.

Targets (the issue's, for 10,000 hosts on the production mode): no
growing backlog, 0 DB writes and 0 Placement calls per unchanged
report, the lifecycle's p95 with the reports at most 1.5 times without
them, registration within 10 minutes, conductors at most 150 MiB.
"""

import concurrent.futures
import json
import os
import subprocess
import sys
import time

import sqlalchemy as sa

from benchmarks import cpu
from benchmarks import lifecycle
from benchmarks import topology

BURST_SECONDS = 20
# A PostgreSQL 15 backend publishes its table statistics at the end of
# a transaction at most once a second, and an idle one after 10 s
# (PGSTAT_IDLE_INTERVAL): a pooled connection that went idle keeps the
# writes of its last transactions unpublished until then.
STATS_DELAY = 11


class FleetProcess:
    """``benchmarks.fleet`` in a child process, driven line by line."""

    def __init__(self, config_file, hosts, period, changed, threads=32):
        self.proc = subprocess.Popen(
            [sys.executable, '-m', 'benchmarks.fleet', '--config-file',
             config_file, '--hosts', str(hosts), '--period', str(period),
             '--changed', str(changed), '--threads', str(threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ask_ready()

    def ask_ready(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError('the fleet did not start')
        return json.loads(line)

    def ask(self, command):
        self.proc.stdin.write(command + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError('the fleet stopped during %r' % command)
        return json.loads(line)

    def stop(self):
        try:
            self.proc.stdin.write('quit\n')
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def _db_writes(db_url):
    """Rows inserted, updated and deleted in the database so far, by
    table."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return {row.relname: int(row.n) for row in conn.execute(sa.text(
                'SELECT relname, n_tup_ins + n_tup_upd + n_tup_del AS n '
                'FROM pg_stat_user_tables'))}
    finally:
        engine.dispose()


def _placement_calls(system):
    """Requests Placement has logged so far (its request log)."""
    with open(system.placement.output, errors='replace') as f:
        return sum(1 for line in f if '" status: ' in line)


def _phase(system, groups, action):
    """Run ``action``; its answer with the CPU of each group, the DB
    writes and the Placement calls it cost."""
    meter = cpu.CpuMeter(groups)
    writes, calls = _db_writes(system.db_url), _placement_calls(system)
    meter.start()
    answer = action()
    spent = meter.stop()['spent']
    time.sleep(STATS_DELAY)
    answer['cpu_s'] = {name: round(value, 2)
                       for name, value in spent.items()}
    after = _db_writes(system.db_url)
    by_table = {table: count - writes.get(table, 0)
                for table, count in sorted(after.items())
                if count != writes.get(table, 0)}
    answer['db_row_writes'] = sum(by_table.values())
    answer['db_row_writes_by_table'] = by_table
    answer['placement_calls'] = _placement_calls(system) - calls
    return answer


def _per_report(phase):
    count = phase['reports'] or 1
    return {'conductors_cpu_ms': round(
                phase['cpu_s'].get('conductors', 0) * 1000 / count, 2),
            'fleet_cpu_ms': round(
                phase['cpu_s'].get('fleet', 0) * 1000 / count, 2),
            'db_row_writes': round(phase['db_row_writes'] / count, 3),
            'placement_calls': round(phase['placement_calls'] / count, 3)}


def _lifecycle(system, profile, hostname, rp_uuid, seconds):
    run = lifecycle.run(system.url, profile, hostname, rp_uuid, 8, seconds)
    steps = run['steps_ms']['lifecycle']
    return {'throughput_per_s': run['throughput_per_s'],
            'errors': run['errors'], 'p50_ms': steps['p50'],
            'p95_ms': steps['p95']}


def run(system, profile, hostname, rp_uuid, hosts, period, changed,
        duration, baseline, sampler):
    """Every phase of the module's description, in one deployment."""
    result = {'hosts': hosts, 'devices_per_host': 8, 'period_s': period,
              'changed_share': changed}
    result['lifecycle_alone'] = _lifecycle(system, profile, hostname,
                                           rp_uuid, baseline)
    fleet = FleetProcess(os.path.join(system.tmp, topology.HOST + '.conf'),
                         hosts, period, changed)
    sampler.add('fleet', fleet.proc.pid)
    groups = dict(system.cpu_groups(), fleet=([fleet.proc.pid], False))
    try:
        result['providers'] = fleet.ask('providers')
        register = _phase(system, groups, lambda: fleet.ask('register'))
        register['cpu_s_per_host'] = {
            name: round(value / hosts, 4)
            for name, value in register['cpu_s'].items()}
        result['register'] = register
        for kind in ('unchanged', 'changed'):
            burst = _phase(system, groups, lambda k=kind: fleet.ask(
                'burst %s %d' % (k, BURST_SECONDS)))
            burst['per_report'] = _per_report(burst)
            result['%s_reports' % kind] = burst
        result['steady'] = _steady(system, fleet, profile, hostname,
                                   rp_uuid, duration)
    finally:
        fleet.stop()
    alone, beside = result['lifecycle_alone'], result['steady']['lifecycle']
    result['targets'] = {
        'lifecycle_p95_of_alone': round(beside['p95_ms'] / alone['p95_ms'],
                                        3),
        'lifecycle_p95_target': 1.5,
        'register_target_s': 600,
        'unchanged_db_writes_and_placement_calls_target': 0,
        'conductor_rss_target_mb': 150}
    return result


def _steady(system, fleet, profile, hostname, rp_uuid, duration):
    """The fleet's periodic reports with the lifecycle beside them: the
    fleet starts first and runs ``duration`` seconds; the lifecycle
    runs for all but the first and last 10 % of them."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        reports = pool.submit(fleet.ask, 'steady %d' % duration)
        time.sleep(duration * 0.1)
        beside = _lifecycle(system, profile, hostname, rp_uuid,
                            duration * 0.8)
        steady = reports.result()
    steady['lifecycle'] = beside
    return steady
