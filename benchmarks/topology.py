"""The production topology as a system under test.

Separate processes, configured by files only: ``cyborg-lite-api`` under
gunicorn (2 workers of 8 threads each, cyborg-lite's worker class by
default; ``--api-workers`` sets how many, and ``--api-server`` serves
the API with uWSGI or the built-in server instead, for comparison), one
or two ``cyborg-lite-conductor``, one ``cyborg-lite-agent`` with the fake
driver, and RabbitMQ (from ``tools/test-setup.sh``, started here when
the environment does not name it). Two set-ups:

* ``Topology`` (``--topology multiprocess``), the faster one: the
  test set-up's PostgreSQL, which runs with fsync, synchronous_commit
  and full_page_writes off; no Placement (the conductors have no
  ``[placement]``, so agent reports reach no Placement) and no Nova (no
  ``[nova]``, so no ``accelerator-request-bound`` events are sent); the
  FPGA has 512 handles.
* ``ProductionTopology`` (``--topology production``), the install guide's
  "Production mode" as deployed: a PostgreSQL with PostgreSQL's default
  durability (``tools/test-setup.sh start-durable-pg``), the placement
  stub under gunicorn (2 workers, ``placement-stub-manage db sync``
  first) as the conductors' and nova_shim's Placement,
  ``nova-shim-compute`` receiving the conductors' events at ``[nova]``
  and owning the agent's compute-node provider, 16 handles per FPGA
  (the fake driver's default), each service on a database of its own.
"""

import contextlib
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


DURABLE_PG_ENV = 'CYBORG_LITE_BENCH_PG_URL'


def ensure_durable_pg():
    """The URL of a PostgreSQL server with default durability
    (``CYBORG_LITE_BENCH_PG_URL``), started by ``tools/test-setup.sh
    start-durable-pg`` when the environment names none."""
    if not os.environ.get(DURABLE_PG_ENV):
        out = subprocess.run([os.path.join(REPO, 'tools/test-setup.sh'),
                              'start-durable-pg'], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith('export '):
                name, _, value = line[len('export '):].partition('=')
                os.environ[name] = value
    return os.environ[DURABLE_PG_ENV]


class Topology:
    def __init__(self, conductors=1, handles=512, api_workers=2, api_threads=8,
                 rpc_batch_size=api_conf.default('rpc_batch_size'),
                 worker_class=gunicorn_worker.WORKER_CLASS,
                 api_server='gunicorn', rabbit_url=None,
                 messaging_options=None):
        """``api_server``: ``gunicorn`` (``api_workers`` processes of
        ``api_threads`` threads, ``worker_class``), ``uwsgi`` (pyuwsgi's
        ``uwsgi``: as many processes and threads on an HTTP/1.1
        socket, for comparison: its C parser against gunicorn's) or
        ``waitress`` (``cyborg-lite-api``, the built-in
        server: one process, which has no process manager of its
        own). ``rabbit_url``: a broker (a cluster) other than the test
        set-up's, with ``messaging_options`` in
        ``[oslo_messaging_rabbit]``."""
        self.tmp = tempfile.mkdtemp(prefix='cyborg-lite-bench-')
        self.rabbit_url = rabbit_url
        self.messaging_options = messaging_options or {}
        self.api_server = api_server
        self.conductors = conductors
        self.handles = handles
        self.workers = api_workers
        self.threads = api_threads
        self.worker_class = worker_class
        self.rpc_batch_size = rpc_batch_size
        self.group = processes.ProcessGroup(self.tmp)
        self._dbs = contextlib.ExitStack()

    def _sections(self, name, db_url, rabbit_url, suffix):
        return {
            'DEFAULT': {'transport_url': rabbit_url, 'host': name,
                        'log_file': os.path.join(self.tmp, name + '.log'),
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
                          'handles': self.handles}])}}

    def _config(self, name, db_url, rabbit_url, suffix):
        sections = self._sections(name, db_url, rabbit_url, suffix)
        if self.messaging_options:
            sections['oslo_messaging_rabbit'] = dict(self.messaging_options)
        return processes.write_config(
            os.path.join(self.tmp, name + '.conf'), sections)

    def start(self):
        """Start every process; a start that fails stops what it had
        started before it raises."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _database(self, server_url=None):
        """A new database, dropped at ``stop``."""
        return self._dbs.enter_context(
            databases.pg_database(server_url=server_url))

    def _start(self):
        rabbit_url = self.transport_url = (self.rabbit_url or
                                           ensure_servers())
        self.pg_server_url = os.environ[databases.PG_ENV]
        db_url = self.db_url = self._database()
        suffix = self.suffix = uuid.uuid4().hex[:8]
        api_conf = self._config('api', db_url, rabbit_url, suffix)
        self.group.run(processes.script('cyborg-lite-dbsync') + [
            '--config-file', api_conf, 'upgrade'])
        self._start_api(api_conf, processes.free_port())
        self._start_conductors(db_url, rabbit_url, suffix)
        self._start_agent(db_url, rabbit_url, suffix)
        self.api.wait_for_http(self.url + '/healthcheck')
        return self

    def _start_api(self, api_conf, port):
        self.url = 'http://127.0.0.1:%d' % port
        if self.api_server == 'waitress':
            self.api = self.group.start('api', processes.script(
                'cyborg-lite-api') + ['--config-file', api_conf,
                                      '--config-file', processes.write_config(
                                          os.path.join(self.tmp,
                                                       'api-port.conf'),
                                          {'api': {'host_ip': '127.0.0.1',
                                                   'port': port}})])
            return
        if self.api_server == 'uwsgi':
            self.api = self.group.start('api', processes.script('uwsgi') + [
                '--http11-socket', '127.0.0.1:%d' % port,
                '--processes', str(self.workers),
                '--threads', str(self.threads),
                '--module', 'cyborg_lite.api.wsgi:application',
                '--master', '--lazy-apps', '--need-app', '--die-on-term',
                '--thunder-lock', '--disable-logging'],
                env={'CYBORG_LITE_CONFIG_FILES': api_conf})
            return
        self.api = self.group.start('api', processes.script('gunicorn') + [
            '--workers', str(self.workers), '--threads', str(self.threads),
            '--worker-class', self.worker_class,
            '--bind', '127.0.0.1:%d' % port,
            'cyborg_lite.api.wsgi:application'],
            env={'CYBORG_LITE_CONFIG_FILES': api_conf})

    def _start_conductors(self, db_url, rabbit_url, suffix):
        self.servers = []
        for n in range(self.conductors):
            conf = self._config('conductor-%d' % n, db_url, rabbit_url,
                                suffix)
            self.servers.append(self._start_conductor(n, conf))

    def _start_conductor(self, n, conf):
        name = 'conductor-%d' % n
        proc = self.group.start(name, processes.script(
            'cyborg-lite-conductor') + ['--config-file', conf],
            log_file=os.path.join(self.tmp, name + '.log'))
        # The log goes on from an earlier process of the name.
        proc.wait_for_line(r' %d INFO .* listening on topic' % proc.pid,
                           timeout=60)
        return proc

    def kill_conductor(self, n):
        """SIGKILL conductor ``n`` and start it again; the new
        process."""
        old = self.servers[n]
        old.popen.kill()
        old.popen.wait(timeout=10)
        self.group.processes.remove(old)
        self.servers[n] = self._start_conductor(
            n, os.path.join(self.tmp, 'conductor-%d.conf' % n))
        return self.servers[n]

    def _start_agent(self, db_url, rabbit_url, suffix):
        conf = self._config(HOST, db_url, rabbit_url, suffix)
        self.agent = self.group.start('agent', processes.script(
            'cyborg-lite-agent') + ['--config-file', conf],
            log_file=os.path.join(self.tmp, HOST + '.log'))
        self.agent.wait_for_line(r'Agent \S+ started', timeout=90)

    def server_pids(self):
        """``{name: pid}`` of every server process, gunicorn workers
        included."""
        pids = {'conductor-%d' % n: p.pid for n, p in
                enumerate(self.servers)}
        workers = psutil.Process(self.api.pid).children() \
            if self.api_server in ('gunicorn', 'uwsgi') else [self.api]
        for n, worker in enumerate(workers):
            pids['api-worker-%d' % n] = worker.pid
        pids['agent'] = self.agent.pid
        return pids

    def cpu_groups(self):
        """The process groups of ``benchmarks.cpu.CpuMeter``: the
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
            self.pg_server_url).port)
        if rabbit:
            groups['rabbitmq'] = ([rabbit], False)
        if postgres:
            groups['postgresql'] = ([postgres], True)
        return groups

    def stop(self):
        try:
            self.group.stop_all()
            self._dbs.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


class ProductionTopology(Topology):
    """The install guide's "Production mode" as deployed (see the
    module's doc)."""

    def __init__(self, conductors=1, handles=16, events_per_request=None,
                 events_wait=None, resolved_events_wait=None, **kwargs):
        """``events_per_request``, ``events_wait``,
        ``resolved_events_wait``: the conductors' ``[nova]`` options of
        those names (their defaults when None)."""
        super().__init__(conductors=conductors, handles=handles, **kwargs)
        self.nova_options = {
            'events_per_request': events_per_request,
            'events_wait': events_wait,
            'resolved_events_wait': resolved_events_wait}

    def _sections(self, name, db_url, rabbit_url, suffix):
        sections = super()._sections(name, db_url, rabbit_url, suffix)
        sections['placement'] = {'auth_type': 'none',
                                 'endpoint_override': self.placement_url}
        sections['nova'] = {'auth_type': 'none',
                            'endpoint_override': self.nova_url + '/v2.1'}
        sections['nova'].update({
            name: value for name, value in self.nova_options.items()
            if value is not None})
        return sections

    def _start(self):
        rabbit_url = self.transport_url = (self.rabbit_url or
                                           ensure_servers())
        self.pg_server_url = ensure_durable_pg()
        placement_db = self._database(self.pg_server_url)
        db_url = self.db_url = self._database(self.pg_server_url)
        nova_db = self._database(self.pg_server_url)
        api_port = processes.free_port()
        self.url = 'http://127.0.0.1:%d' % api_port
        self.nova_port = processes.free_port()
        self.nova_url = 'http://127.0.0.1:%d' % self.nova_port
        self._start_placement(placement_db)
        suffix = self.suffix = uuid.uuid4().hex[:8]
        api_conf = self._config('api', db_url, rabbit_url, suffix)
        self.group.run(processes.script('cyborg-lite-dbsync') + [
            '--config-file', api_conf, 'upgrade'])
        # The install guide's order: conductors, API, nova-shim-compute
        # (which creates the compute-node provider), the agent.
        self._start_conductors(db_url, rabbit_url, suffix)
        self._start_api(api_conf, api_port)
        self.api.wait_for_http(self.url + '/healthcheck')
        self._start_nova_shim(nova_db)
        self._start_agent(db_url, rabbit_url, suffix)
        return self

    def _start_placement(self, db_url):
        conf = processes.write_config(
            os.path.join(self.tmp, 'placement-stub.conf'), {
                'api': {'auth_strategy': 'noauth2'},
                'placement_database': {'connection': db_url},
                'placement': {'sync_on_startup': False}})
        self.group.run(processes.script('placement-stub-manage') + [
            '--config-file', conf, 'db', 'sync'])
        port = processes.free_port()
        self.placement_url = 'http://127.0.0.1:%d' % port
        self.placement = self.group.start(
            'placement', processes.script('gunicorn') + [
                '--workers', '2', '--bind', '127.0.0.1:%d' % port,
                '--control-socket',
                os.path.join(self.tmp, 'placement-gunicorn.ctl'),
                'placement_stub.wsgi:application'],
            env={'PLACEMENT_STUB_CONFIG_FILES': conf})
        self.placement.wait_for_http(self.placement_url + '/healthcheck')

    def _start_nova_shim(self, db_url):
        conf = processes.write_config(
            os.path.join(self.tmp, 'nova-shim.conf'), {
                'DEFAULT': {'state_path': os.path.join(self.tmp,
                                                       'nova-shim')},
                'api': {'auth_strategy': 'noauth2'},
                'compute': {'hypervisor_hostnames': [HOST],
                            'api_host': '127.0.0.1',
                            'api_port': self.nova_port},
                'database': {'connection': db_url,
                             'sync_on_startup': True},
                'libvirt': {'connection_uri': 'test:///default'},
                'placement': {'auth_type': 'none',
                              'endpoint_override': self.placement_url},
                'cyborg': {'auth_type': 'none',
                           'endpoint_override': self.url + '/v2'},
                'service_user': {'send_service_user_token': True}})
        self.nova_shim = self.group.start(
            'nova-shim-compute', processes.script('nova-shim-compute') + [
                '--config-file', conf])
        self.nova_shim.wait_for_line(r'compute API at http://\S+/v2\.1',
                                     timeout=60)

    def server_pids(self):
        pids = super().server_pids()
        for n, worker in enumerate(
                psutil.Process(self.placement.pid).children()):
            pids['placement-worker-%d' % n] = worker.pid
        pids['nova-shim-compute'] = self.nova_shim.pid
        return pids

    def cpu_groups(self):
        groups = super().cpu_groups()
        groups['placement'] = ([self.placement.pid], True)
        groups['nova-shim-compute'] = ([self.nova_shim.pid], False)
        return groups
