"""A long run under load, with faults: the production mode for hours.

``python -m benchmarks --topology production --only soak [--minutes 60]
[--fault-every 10]``

The production mode as deployed (durable PostgreSQL, placement_stub,
Nova events to nova-shim-compute, two conductors) on a three-node
RabbitMQ cluster with quorum queues, configured as the production guide
says (``tools/test-setup.sh start-rabbit-cluster``). Eight clients run
Nova's ARQ lifecycle for ``--minutes``; every ``--fault-every`` minutes
one fault, in turn:

* a conductor SIGKILLed, and started again;
* the RabbitMQ node that leads the conductors' queue stopped for
  ``NODE_DOWN`` seconds, and started again;
* PostgreSQL restarted (a fast shutdown: every session cut).

Every ``SAMPLE_EVERY`` seconds it samples each server process's RSS,
threads and open TCP connections. It prints the lifecycles and the
failed ones (each with the fault before it), and for each process its
figures after the first 5 minutes and at the end.

Targets (for 60 minutes, a fault every 10): 0 failed lifecycles, RSS
growth at most 10 % after the first 5 minutes, no growth of threads or
connections.
"""

import threading
import time

import psutil

from benchmarks import lifecycle
from tests.fixtures import rabbit_cluster

NODE_DOWN = 20
SAMPLE_EVERY = 10
WARM_UP = 300
FAULTS = ('conductor SIGKILL', 'RabbitMQ node stop', 'PostgreSQL restart')


class Sampler:
    """RSS, threads and TCP connections of named processes, with the
    gunicorn masters' workers, sampled on a period."""

    def __init__(self, system):
        self.system = system
        self.samples = []  # (seconds since start, {name: (rss, thr, conn)})
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _processes(self):
        found = {}
        for name, pid in self.system.server_pids().items():
            try:
                found[name] = psutil.Process(pid)
            except psutil.Error:
                continue
        return found

    def _run(self):
        while not self._stop.wait(SAMPLE_EVERY):
            sample = {}
            for name, proc in self._processes().items():
                try:
                    with proc.oneshot():
                        sample[name] = (proc.memory_info().rss,
                                        proc.num_threads(),
                                        len(proc.net_connections('tcp')))
                except psutil.Error:
                    continue
            self.samples.append((time.monotonic() - self._started, sample))

    def stop(self):
        self._stop.set()
        self._thread.join()

    def verdicts(self, warm_up):
        """{name: figures after ``warm_up`` seconds and at the end}."""
        after = [s for t, s in self.samples if t >= warm_up]
        if len(after) < 2:
            return {}
        first, last = after[0], after[-1]
        out = {}
        for name in sorted(set(first) & set(last)):
            # The conductors restart (a fault): their last process only.
            rss0, threads0, conns0 = first[name]
            rss1, threads1, conns1 = last[name]
            peak = max(s[name][0] for s in after if name in s)
            out[name] = {
                'rss_mib': [round(rss0 / 2**20, 1), round(rss1 / 2**20, 1)],
                'rss_growth': round(rss1 / rss0 - 1, 3),
                'peak_rss_mib': round(peak / 2**20, 1),
                'threads': [threads0, threads1],
                'tcp_connections': [conns0, conns1]}
        return out


def _fault(system, cluster, n, queue):
    """Inject fault ``n`` (in turn); a line saying what was done."""
    kind = FAULTS[n % len(FAULTS)]
    started = time.monotonic()
    if kind == 'conductor SIGKILL':
        which = (n // len(FAULTS)) % len(system.servers)
        system.kill_conductor(which)
        done = 'conductor-%d killed and started again' % which
    elif kind == 'RabbitMQ node stop':
        node = cluster.leader(queue) or 1
        cluster.stop_node(node)
        time.sleep(NODE_DOWN)
        cluster.start_node(node)
        done = 'node r%d (leader of %s) stopped %d s' % (node, queue,
                                                         NODE_DOWN)
    else:
        cluster.setup('restart-durable-pg')
        done = 'PostgreSQL restarted'
    return {'fault': kind, 'what': done,
            'seconds': round(time.monotonic() - started, 1)}


def run(system, cluster, profile, hostname, rp_uuid, minutes, fault_every):
    """Run the soak on a started ``system`` whose broker is ``cluster``."""
    queue = 'cyborg-lite-conductor-' + system.suffix
    sampler = Sampler(system)
    result = {}
    done = {}

    def load():
        done['run'] = lifecycle.run(system.url, profile, hostname, rp_uuid,
                                    8, minutes * 60, warmup=0)
    thread = threading.Thread(target=load)
    thread.start()
    faults = []
    started = time.monotonic()
    n = 0
    while True:
        due = started + (n + 1) * fault_every * 60
        if due >= started + minutes * 60 - 30:
            break
        time.sleep(max(0, due - time.monotonic()))
        fault = _fault(system, cluster, n, queue)
        fault['at_s'] = round(time.monotonic() - started)
        faults.append(fault)
        n += 1
    thread.join()
    sampler.stop()
    run = done['run']
    result['lifecycles'] = run['lifecycles']
    result['throughput_per_s'] = run['throughput_per_s']
    result['failed_lifecycles'] = run['errors']
    result['first_failures'] = run['first_errors']
    result['lifecycle_ms'] = run['steps_ms']['lifecycle']
    result['faults'] = faults
    result['processes'] = sampler.verdicts(min(WARM_UP, minutes * 30))
    result['targets'] = {'failed_lifecycles': 0, 'rss_growth': 0.10,
                         'threads_and_connections': 'no growth'}
    return result


def ensure_cluster():
    """The test set-up's RabbitMQ cluster (formed when it is not
    running)."""
    return rabbit_cluster.Cluster().start()
