"""A bounded soak of concurrent ARQ lifecycles.

Clients run create, bind, wait-resolved and delete (the client of
``benchmarks/lifecycle.py``) against the multi-process topology for
``CYBORG_LITE_SOAK_SECONDS`` (60 by default), on loopback only. It ends
with zero errors, no ARQ or attach handle left over, and the resident
memory of every server process flat after warm-up: the mean of the last
third of the samples within 10% of the mean of the middle third.
"""

import os
import statistics
import threading

import psutil
import pytest

from benchmarks import lifecycle
from tests.functional.reliability import harness

SECONDS = int(os.environ.get('CYBORG_LITE_SOAK_SECONDS', '60'))
CONCURRENCY = 4
FLAT = 0.10


def _server_processes(topology):
    procs = {}
    for proc in topology.group.processes:
        ps = psutil.Process(proc.pid)
        procs[proc.name] = ps
        if proc.name == 'api-gunicorn':
            for i, worker in enumerate(ps.children()):
                procs['api-gunicorn-worker%d' % i] = worker
    return procs


class RssSampler(threading.Thread):
    def __init__(self, procs, interval=1.0):
        super().__init__(daemon=True)
        self.procs = procs
        self.interval = interval
        self.samples = {name: [] for name in procs}
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(self.interval):
            for name, ps in self.procs.items():
                try:
                    self.samples[name].append(ps.memory_info().rss)
                except psutil.NoSuchProcess:
                    pass

    def verdicts(self):
        """{name: (middle-third mean MiB, last-third mean MiB, growth)}"""
        out = {}
        for name, values in self.samples.items():
            third = len(values) // 3
            middle = statistics.fmean(values[third:2 * third])
            last = statistics.fmean(values[2 * third:])
            out[name] = (round(middle / 2 ** 20, 1), round(last / 2 ** 20, 1),
                         round(last / middle - 1, 4))
        return out


@pytest.mark.slow
def test_soak_lifecycles(healthy, results):
    topology = healthy
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    rp_uuid = topology.deployable(harness.RACE_DEP)['rp_uuid']
    sampler = RssSampler(_server_processes(topology))
    sampler.start()
    try:
        run = lifecycle.run(topology.cyborg_url, harness.PLAIN_DP,
                            'compute1', rp_uuid, CONCURRENCY, SECONDS,
                            warmup=2)
    finally:
        sampler.halt.set()
        sampler.join()
    leaked_arqs = topology.rows(
        'SELECT uuid, state FROM extended_accelerator_requests')
    leaked_handles = topology.rows(
        'SELECT id FROM attach_handles WHERE in_use')
    verdicts = sampler.verdicts()
    grown = {n: v for n, v in verdicts.items() if v[2] > FLAT}
    results.update(
        fault='none: %d s of %d concurrent ARQ lifecycles' % (
            SECONDS, CONCURRENCY),
        requests=run['lifecycles'] * 4, errors=run['errors'],
        lost=len(leaked_arqs) + len(leaked_handles),
        notes='%d lifecycles (%.1f/s, p95 %.0f ms); RSS growth last vs '
              'middle third: max %+.1f%% (%s)' % (
                  run['lifecycles'], run['throughput_per_s'],
                  run['steps_ms']['lifecycle']['p95'],
                  100 * max(v[2] for v in verdicts.values()),
                  max(verdicts, key=lambda n: verdicts[n][2])),
        rss_mib={n: v[:2] for n, v in verdicts.items()})
    assert run['errors'] == 0, run['first_errors']
    assert run['lifecycles'] > 0
    assert leaked_arqs == [] and leaked_handles == []
    assert grown == {}, grown
