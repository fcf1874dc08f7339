"""The production topology as a system under test.

Separate processes, configured by files only: ``cyborg-lite-api`` under
gunicorn (2 workers of 8 threads each, cyborg-lite's worker class by
default), one or two
``cyborg-lite-conductor``, one
``cyborg-lite-agent`` whose fake FPGA has enough handles, RabbitMQ and
PostgreSQL (from ``tools/test-setup.sh``, started here when the
environment does not name them).
"""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import uuid

import psutil
import sqlalchemy as sa

from benchmarks import cpu
from cyborg_lite.api import gunicorn_worker
from cyborg_lite.conf import api as api_conf
from tests.fixtures import databases
from tests.fixtures import processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = 'bench-compute'


def ensure_servers():
    """RabbitMQ and PostgreSQL URLs, starting throwaway servers if the
    environment names none."""
    if not (os.environ.get('CYBORG_LITE_TEST_RABBIT_URL') and
            os.environ.get(databases.PG_ENV)):
        out = subprocess.run([os.path.join(REPO, 'tools/test-setup.sh'),
                              'start'], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            if line.startswith('export '):
                name, _, value = line[len('export '):].partition('=')
                os.environ[name] = value
    return os.environ['CYBORG_LITE_TEST_RABBIT_URL']


class Topology:
    def __init__(self, conductors=1, handles=512, gunicorn_workers=2,
                 gunicorn_threads=8,
                 rpc_batch_size=api_conf.default('rpc_batch_size'),
                 worker_class=gunicorn_worker.WORKER_CLASS):
        self.tmp = tempfile.mkdtemp(prefix='cyborg-lite-bench-')
        self.conductors = conductors
        self.handles = handles
        self.workers = gunicorn_workers
        self.threads = gunicorn_threads
        self.worker_class = worker_class
        self.rpc_batch_size = rpc_batch_size
        self.group = processes.ProcessGroup(self.tmp)
        self._db = None

    def _config(self, name, db_url, rabbit_url, suffix):
        return processes.write_config(
            os.path.join(self.tmp, name + '.conf'), {
                'DEFAULT': {'transport_url': rabbit_url, 'host': name,
                            'log_file': os.path.join(self.tmp,
                                                     name + '.log'),
                            'use_stderr': False},
                'database': {'connection': db_url},
                'api': {'auth_strategy': 'noauth',
                        'rpc_batch_size': self.rpc_batch_size},
                'conductor': {'topic': 'cyborg-lite-conductor-' + suffix},
                'agent': {'topic': 'cyborg-lite-agent-' + suffix,
                          'enabled_drivers': ['fake'],
                          'resource_provider_name': HOST,
                          'fake_devices': json.dumps([{
                              'type': 'FPGA', 'address': '0000:0c:00.0',
                              'handles': self.handles}])}})

    def start(self):
        """Start every process; a start that fails stops what it had
        started before it raises."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        rabbit_url = self.transport_url = ensure_servers()
        self._db = databases.pg_database()
        db_url = self._db.__enter__()
        suffix = uuid.uuid4().hex[:8]
        api_conf = self._config('api', db_url, rabbit_url, suffix)
        self.group.run(processes.script('cyborg-lite-dbsync') + [
            '--config-file', api_conf, 'upgrade'])
        port = processes.free_port()
        self.url = 'http://127.0.0.1:%d' % port
        self.api = self.group.start('api', processes.script('gunicorn') + [
            '--workers', str(self.workers), '--threads', str(self.threads),
            '--worker-class', self.worker_class,
            '--bind', '127.0.0.1:%d' % port,
            'cyborg_lite.api.wsgi:application'],
            env={'CYBORG_LITE_CONFIG_FILES': api_conf})
        self.servers = []
        for n in range(self.conductors):
            name = 'conductor-%d' % n
            conf = self._config(name, db_url, rabbit_url, suffix)
            proc = self.group.start(name, processes.script(
                'cyborg-lite-conductor') + ['--config-file', conf],
                log_file=os.path.join(self.tmp, name + '.log'))
            proc.wait_for_line(r'listening on topic', timeout=60)
            self.servers.append(proc)
        conf = self._config(HOST, db_url, rabbit_url, suffix)
        self.agent = self.group.start('agent', processes.script(
            'cyborg-lite-agent') + ['--config-file', conf],
            log_file=os.path.join(self.tmp, HOST + '.log'))
        self.agent.wait_for_line(r'Agent \S+ started', timeout=90)
        self.api.wait_for_http(self.url + '/healthcheck')
        return self

    def server_pids(self):
        """``{name: pid}`` of every server process, gunicorn workers
        included."""
        pids = {'conductor-%d' % n: p.pid for n, p in
                enumerate(self.servers)}
        workers = psutil.Process(self.api.pid).children()
        for n, worker in enumerate(workers):
            pids['api-worker-%d' % n] = worker.pid
        pids['agent'] = self.agent.pid
        return pids

    def cpu_groups(self):
        """The process groups of :class:`benchmarks.cpu.CpuMeter`: the
        gunicorn API (master and workers), the conductors, the agent,
        RabbitMQ and PostgreSQL (its postmaster and backends; both found
        by the port they listen on, when this user may see them) and
        the benchmark itself, whose threads are the HTTP clients."""
        groups = {
            'api': ([self.api.pid], True),
            'conductors': ([p.pid for p in self.servers], False),
            'agent': ([self.agent.pid], False),
            'benchmark client': ([os.getpid()], False)}
        rabbit = cpu.listener_pid(urllib.parse.urlsplit(
            self.transport_url).port)
        postgres = cpu.listener_pid(sa.engine.make_url(
            os.environ[databases.PG_ENV]).port)
        if rabbit:
            groups['rabbitmq'] = ([rabbit], False)
        if postgres:
            groups['postgresql'] = ([postgres], True)
        return groups

    def stop(self):
        self.group.stop_all()
        if self._db is not None:
            self._db.__exit__(None, None, None)
        shutil.rmtree(self.tmp, ignore_errors=True)
