"""A fleet of simulated hosts that report through the agent's own code.

The child process of ``benchmarks.region``::

    python -m benchmarks.fleet --config-file AGENT.conf --hosts N
                               [--period 60] [--changed 0.01]
                               [--threads 32]

Each host is an ``AgentService`` of cyborg-lite's agent (its
``report``: discovery through its drivers, the digest, the conductor's
``report_devices`` RPC call over the configuration's transport), whose
one driver is ``FleetDriver``: 8 FPGAs of 4 handles each, one of them
with a fifth handle while the host is "changed". Only the hardware is
simulated; no RPC server is started per host.

Commands come one per line on stdin; each answer is one JSON line on
stdout:

``providers``
    create each host's compute-node provider in Placement (what
    nova-compute does before its agent starts), ``--threads`` at a time;
``register``
    every host reports once, ``--threads`` at a time: the time to
    register the fleet from an empty database;
``steady SECONDS``
    each host reports every ``--period`` seconds (the first ones spread
    over the period), ``--changed`` of the reports with a change; the
    reports' latency, how late they started (the backlog: a report is
    late when no thread was free when it was due), failures;
``burst KIND SECONDS``
    reports back to back from every thread for SECONDS, ``unchanged``
    or ``changed`` ones, to measure what each costs;
``quit``.
"""

import argparse
import concurrent.futures
import heapq
import json
import random
import sys
import tempfile
import threading
import time
import uuid

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent import service as agent_service
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.conductor import placement
from cyborg_lite import conf as cl_conf
from cyborg_lite import model
from cyborg_lite import rpc

DEVICES_PER_HOST = 8
HANDLES = 4


def host_name(index):
    return 'fleet-%05d' % index


class FleetDriver(base.Driver):
    """8 FPGAs; the first has a fifth handle while ``changed``."""

    name = 'fleet'

    def __init__(self, conf, sysfs, hostname):
        super().__init__(conf, sysfs, hostname)
        self.changed = False

    def discover(self):
        devices = []
        for n in range(DEVICES_PER_HOST):
            address = '0000:%02x:00.0' % (0x10 + n)
            handles = HANDLES + (1 if self.changed and n == 0 else 0)
            functions = ['0000:%02x:00.%d' % (0x10 + n, f)
                         for f in range(handles)]
            devices.append(model.DriverDevice(
                type='FPGA', vendor='0x8086', model='fleet',
                controlpath_type='PCI',
                controlpath_info=model.canonical_json(
                    model.pci_address_info(address)),
                deployables=(model.DriverDeployable(
                    name=self.deployable_name(address),
                    num_accelerators=handles, driver_name=self.name,
                    attributes=base.attributes('FPGA', ['CUSTOM_FLEET']),
                    attach_handles=tuple(base.pci_handle(a)
                                         for a in functions)),)))
        return devices


def percentile(values, pct):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1,
                             int(pct / 100 * len(ordered)))], 2)


class Fleet:
    def __init__(self, conf, hosts, threads, period, changed):
        self.conf = conf
        self.period = period
        self.changed_share = changed
        self.transport = rpc.get_transport(conf)
        # No host's hardware is read: an empty tree.
        sysfs = Sysfs(tempfile.mkdtemp(prefix='cyborg-lite-fleet-'))
        self.agents = []
        for index in range(hosts):
            name = host_name(index)
            driver = FleetDriver(conf, sysfs, name)
            agent = agent_service.AgentService(
                conf, self.transport, hostname=name, sysfs=sysfs,
                drivers=[driver])
            agent.fleet_driver = driver
            self.agents.append(agent)
        self.pool = concurrent.futures.ThreadPoolExecutor(threads)
        self.threads = threads
        self.rng = random.Random(0)

    # -- commands ------------------------------------------------------

    def providers(self):
        client = placement.get_client(self.conf)
        started = time.monotonic()

        def create(agent):
            client.create_child_provider(
                str(uuid.uuid5(uuid.NAMESPACE_DNS, agent.hostname)),
                agent.hostname, None)
        list(self.pool.map(create, self.agents))
        return {'providers': len(self.agents),
                'seconds': round(time.monotonic() - started, 1)}

    def _report(self, agent, changed=None):
        if changed is not None:
            agent.fleet_driver.changed = changed
        started = time.monotonic()
        agent.report()
        return time.monotonic() - started

    def register(self):
        started = time.monotonic()
        futures = [self.pool.submit(self._report, agent)
                   for agent in self.agents]
        latencies, failed = self._collect(futures)
        elapsed = time.monotonic() - started
        return {'hosts': len(self.agents), 'seconds': round(elapsed, 1),
                'hosts_per_s': round(len(self.agents) / elapsed, 1),
                'failed': failed,
                'report_ms': {'p50': percentile(latencies, 50),
                              'p95': percentile(latencies, 95)}}

    @staticmethod
    def _collect(futures):
        latencies, failed = [], 0
        for future in futures:
            try:
                latencies.append(future.result() * 1000)
            except Exception as exc:  # noqa: BLE001 - counted
                failed += 1
                print('report failed: %s' % exc, file=sys.stderr)
        return latencies, failed

    def steady(self, seconds):
        """Every host every period, from a schedule: a report is sent
        when a thread is free; its lateness is how long after it was
        due that was."""
        now = time.monotonic()
        due = [(now + self.period * index / len(self.agents), index)
               for index in range(len(self.agents))]
        heapq.heapify(due)
        stop_at = now + seconds
        free = threading.Semaphore(self.threads)
        lock = threading.Lock()
        latencies, lateness, failed, changed = [], [], [0], [0]
        backlog = []

        def send(agent, is_changed, late):
            try:
                took = self._report(agent, is_changed)
                with lock:
                    latencies.append(took * 1000)
                    lateness.append(late * 1000)
            except Exception as exc:  # noqa: BLE001 - counted
                with lock:
                    failed[0] += 1
                print('report failed: %s' % exc, file=sys.stderr)
            finally:
                free.release()

        next_sample = now
        while True:
            at, index = due[0]
            now = time.monotonic()
            if now >= next_sample:
                backlog.append(sum(1 for t, _ in due if t <= now))
                next_sample = now + 5
            if at >= stop_at:
                break
            if at > now:
                time.sleep(min(at - now, 0.05))
                continue
            free.acquire()
            heapq.heapreplace(due, (at + self.period, index))
            agent = self.agents[index]
            # A change in one report of ``changed_share``: the first
            # device gains (or loses again) a handle, and keeps it.
            state = agent.fleet_driver.changed
            if self.rng.random() < self.changed_share:
                state = not state
                changed[0] += 1
            self.pool.submit(send, agent, state, time.monotonic() - at)
        for _ in range(self.threads):
            free.acquire()
        for _ in range(self.threads):
            free.release()
        count = len(latencies)
        return {'seconds': seconds, 'reports': count,
                'reports_per_s': round(count / seconds, 1),
                'changed_reports': changed[0], 'failed': failed[0],
                'report_ms': {'p50': percentile(latencies, 50),
                              'p95': percentile(latencies, 95),
                              'max': percentile(latencies, 100)},
                'late_ms': {'p50': percentile(lateness, 50),
                            'p95': percentile(lateness, 95),
                            'max': percentile(lateness, 100)},
                'backlog_every_5s': backlog}

    def burst(self, kind, seconds):
        stop_at = time.monotonic() + seconds
        counter = iter(range(10 ** 9))
        lock = threading.Lock()

        def worker():
            latencies = []
            while time.monotonic() < stop_at:
                with lock:
                    agent = self.agents[next(counter) % len(self.agents)]
                changed = (not agent.fleet_driver.changed
                           if kind == 'changed' else
                           agent.fleet_driver.changed)
                latencies.append(self._report(agent, changed) * 1000)
            return latencies
        futures = [self.pool.submit(worker) for _ in range(self.threads)]
        latencies = [ms for f in futures for ms in f.result()]
        return {'kind': kind, 'reports': len(latencies),
                'seconds': seconds,
                'report_ms': {'p50': percentile(latencies, 50),
                              'p95': percentile(latencies, 95)}}


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.fleet')
    parser.add_argument('--config-file', required=True)
    parser.add_argument('--hosts', type=int, required=True)
    parser.add_argument('--threads', type=int, default=32)
    parser.add_argument('--period', type=float, default=60.0)
    parser.add_argument('--changed', type=float, default=0.01)
    args = parser.parse_args(argv)
    conf = cl_conf.build_conf(['--config-file', args.config_file])
    fleet = Fleet(conf, args.hosts, args.threads, args.period, args.changed)
    print(json.dumps({'ready': args.hosts}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == 'quit':
            break
        if words[0] == 'providers':
            answer = fleet.providers()
        elif words[0] == 'register':
            answer = fleet.register()
        elif words[0] == 'steady':
            answer = fleet.steady(float(words[1]))
        elif words[0] == 'burst':
            answer = fleet.burst(words[1], float(words[2]))
        else:
            answer = {'error': 'unknown command %r' % words[0]}
        print(json.dumps(answer), flush=True)
    fleet.pool.shutdown()


if __name__ == '__main__':
    main()
