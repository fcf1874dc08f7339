"""The reliability topology: the multi-process topology on servers of
its own, with short timeouts, a slow FPGA program command, and a
recording stand-in for Nova's external-events endpoint.

``ReliabilityTopology`` extends
``tests.functional.multiprocess.topology.Topology`` (same processes,
same configuration files) with what fault injection needs: SIGKILL and
restart of a conductor, restart of an agent with other devices, and
invariant checks read straight from the cyborg-lite database.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import signal
import stat
import threading
import time
import uuid

import psutil
import requests
import sqlalchemy as sa

from tests.fixtures import cyborg_api
from tests.fixtures import databases
from tests.fixtures import processes
from tests.fixtures import sysfs_tree
from tests.functional.multiprocess import topology as topo_mod

BIND_TIMEOUT = 6          # [conductor] bind_timeout
SWEEP_INTERVAL = 1        # [conductor] sweep_interval
# [api] rpc_timeout as deployed (the default): a fault must not cost a
# caller this, and the bounds below are far shorter.
RPC_TIMEOUT = 30
REPORT_INTERVAL = 2       # [agent] report_interval
EVENT_RETRIES = 3         # [nova] event_retries
# What a fault may cost a caller: a conductor killed mid-call, a broker
# killed or restarted (the [api] rpc_fault_timeout default, 9 s, keeps
# the API's answers within it).
CONDUCTOR_FAULT_BOUND = 5.0
BROKER_FAULT_BOUND = 10.0
# Allowance on top of a bound for a loaded, shared 2-core machine: the
# bounds are the requirements, the figures in
# doc/source/admin/reliability-report.rst the measurements.
LOADED_MACHINE = 2.0
PLAIN_DP = 'rel-plain'    # binds that end Bound in one transaction
RACE_DEP = 'compute1_0000:0c:00.0'


class NovaRecorder:
    """``POST /v2.1/os-server-external-events`` that records every
    event it is sent. ``mode``: ``forward`` (to nova-shim, its answer
    returned), ``error`` (503). ``down`` closes the port."""

    def __init__(self) -> None:
        self.port = processes.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.mode = 'forward'
        self.forward_to = None
        self.posts: list[tuple[float, str, list[dict]]] = []
        self._lock = threading.Lock()
        self._server = None

    def events(self, mode=None) -> list[dict]:
        with self._lock:
            return [e for _, m, evs in self.posts for e in evs
                    if mode is None or m == mode]

    def up(self) -> None:
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                events = json.loads(body)['events']
                mode = recorder.mode
                with recorder._lock:
                    recorder.posts.append((time.time(), mode, events))
                status, answer = 503, b'{"error": "injected"}'
                if mode == 'forward' and recorder.forward_to:
                    resp = requests.post(
                        recorder.forward_to + self.path, data=body,
                        headers={k: v for k, v in self.headers.items()
                                 if k.lower() not in ('host',
                                                      'content-length')},
                        timeout=10)
                    status, answer = resp.status_code, resp.content
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self._server = http.server.ThreadingHTTPServer(
            ('127.0.0.1', self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever,
                         daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class ReliabilityTopology(topo_mod.Topology):
    def __init__(self, tmp_dir, servers) -> None:
        super().__init__(tmp_dir, servers.rabbit_url)
        self.servers = servers
        self.nova_recorder = NovaRecorder()
        self.agent_devices = {h: d for h, (_, d) in
                              topo_mod.HOST_DEVICES.items()}
        # Hosts whose agent runs a real driver on its sysfs tree instead
        # of the fake one: host -> driver name.
        self.agent_drivers: dict[str, str] = {}
        # Options the tests add to the API servers' files: group -> values.
        self.api_options: dict[str, dict] = {}
        # The tree each conductor runs from, where not this one.
        self.conductor_code: dict[str, str | None] = {}
        self.program_delay_file = os.path.join(self.tmp, 'program-delay')
        self.program_script = os.path.join(self.tmp, 'program-fpga')
        with open(self.program_script, 'w') as f:
            f.write('#!/bin/sh\n# <pci address> <bitstream>\n'
                    'sleep "$(cat %s 2>/dev/null || echo 0)"\n'
                    % self.program_delay_file)
        os.chmod(self.program_script, stat.S_IRWXU)

    def start(self):
        # The topology takes its databases from the PostgreSQL that
        # CYBORG_LITE_TEST_PG_URL names: ours, for the start only.
        saved = os.environ.get(databases.PG_ENV)
        os.environ[databases.PG_ENV] = self.servers.pg_url
        self.nova_recorder.up()
        try:
            super().start()
        finally:
            if saved is None:
                del os.environ[databases.PG_ENV]
            else:
                os.environ[databases.PG_ENV] = saved
        self.nova_recorder.forward_to = self.nova_url
        self.db = sa.create_engine(self.cyborg_db, pool_pre_ping=True)
        return self

    def stop(self):
        self.nova_recorder.down()
        if getattr(self, 'db', None) is not None:
            self.db.dispose()
        try:
            self.group.stop_all()
            return self.group.leftovers()
        finally:
            try:
                self.stack.close()
            except sa.exc.OperationalError:
                # The fixture's admin connection died with a PostgreSQL
                # restart; the databases go with our server anyway.
                pass

    def _cyborg_sections(self, log_name):
        sections = super()._cyborg_sections(log_name)
        sections['conductor'].update(bind_timeout=BIND_TIMEOUT,
                                     sweep_interval=SWEEP_INTERVAL)
        sections['api']['rpc_timeout'] = RPC_TIMEOUT
        sections['nova'].update(
            endpoint_override=self.nova_recorder.url + '/v2.1',
            event_retries=EVENT_RETRIES, event_retry_delay=0.2)
        sections['agent'].update(report_interval=REPORT_INTERVAL,
                                 fpga_program_command=self.program_script)
        return sections

    def _start_agent(self, host):
        tree = topo_mod.HOST_DEVICES[host][0]
        root = os.path.join(self.tmp, host, tree)
        if not os.path.isdir(root):
            sysfs_tree.copy_tree(tree, os.path.join(self.tmp, host))
        sections = self._cyborg_sections('agent-%s.log' % host)
        sections['DEFAULT']['host'] = host
        sections['agent'].update({
            'enabled_drivers': [self.agent_drivers.get(host, 'fake')],
            'sysfs_root': root,
            'fake_devices': json.dumps(self.agent_devices[host]),
            'resource_provider_startup_retries': 5,
            'resource_provider_startup_delay': 0.5,
            'bitstream_dir': self.tmp})
        conf = self._config('agent-' + host, sections)
        proc = self.group.start('agent-' + host, processes.script(
            'cyborg-lite-agent') + ['--config-file', conf],
            log_file=sections['DEFAULT']['log_file'])
        self.agents.append(proc)
        return proc

    # -- faults ---------------------------------------------------------

    def set_program_delay(self, seconds: float) -> None:
        with open(self.program_delay_file, 'w') as f:
            f.write(str(seconds))

    def kill_conductor(self, name: str) -> None:
        [proc] = [p for p in self.conductors if p.name == name]
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=10)
        self.conductors.remove(proc)
        self.group.processes.remove(proc)

    def restart_conductor(self, name: str, code: str | None = None):
        """Start conductor ``name`` again: of this tree, or of the
        release whose ``cyborg_lite`` package is under ``code``."""
        self._start_conductor(name, code)
        proc = self.conductors[-1]
        # The log file goes on from the last process: this one's line.
        proc.wait_for_line(r' %d INFO .* listening on topic' % proc.pid,
                           timeout=60)
        return proc

    def _start_conductor(self, name, code=None):
        sections = self._cyborg_sections(name + '.log')
        sections['DEFAULT']['host'] = name
        conf = self._config(name, sections)
        self.conductor_code[name] = code
        self.conductors.append(self.group.start(name, processes.script(
            'cyborg-lite-conductor') + ['--config-file', conf],
            env={'PYTHONPATH': code} if code else None,
            log_file=sections['DEFAULT']['log_file']))

    def stop_conductor(self, name: str) -> None:
        """Stop conductor ``name`` as an init system does (SIGTERM):
        it finishes the calls it holds."""
        [proc] = [p for p in self.conductors if p.name == name]
        self.group.stop(proc, grace=30)
        self.conductors.remove(proc)

    def set_api_options(self, group: str, values: dict) -> None:
        """Rewrite both API servers' configuration files with
        ``values`` in ``group`` (None values left out); they read it
        when they restart (``restart_api``)."""
        self.api_options[group] = {k: v for k, v in values.items()
                                   if v is not None}
        self._config('cyborg-lite', self._api_sections('api.log'))
        self._config('cyborg-lite-builtin',
                     self._api_sections('api-builtin.log'))

    def _api_sections(self, log_name):
        sections = self._cyborg_sections(log_name)
        for group, values in self.api_options.items():
            sections.setdefault(group, {}).update(values)
        return sections

    def restart_api(self, url: str) -> None:
        """Restart the API server at ``url`` with its configuration
        file as it is now: gunicorn by SIGHUP (new workers, the old ones
        finish their requests), the built-in server by SIGTERM and a
        new process."""
        if url == self.cyborg_url:
            master = psutil.Process(self.gunicorn.pid)
            old = {w.pid for w in master.children()}
            self.gunicorn.popen.send_signal(signal.SIGHUP)

            def replaced():
                workers = {w.pid for w in master.children()}
                return len(workers) >= 2 and not workers & old
            assert wait_for(replaced, 60), 'gunicorn kept its old workers'
            self.group._remember(self.gunicorn.pid)
            self.gunicorn.wait_for_http(self.cyborg_url + '/healthcheck')
            return
        self.group.stop(self.builtin, grace=30)
        self.builtin = self.group.start(
            'api-builtin', processes.script('cyborg-lite-api') + [
                '--config-file', os.path.join(self.tmp,
                                              'cyborg-lite-builtin.conf')])
        self.builtin.wait_for_http(self.builtin_url + '/healthcheck')

    def sysfs_root(self, host: str) -> str:
        return os.path.join(self.tmp, host, topo_mod.HOST_DEVICES[host][0])

    def restart_agent(self, host: str, devices=None):
        [proc] = [p for p in self.agents if p.name == 'agent-' + host]
        self.group.stop(proc)
        self.agents.remove(proc)
        if devices is not None:
            self.agent_devices[host] = devices
        # Each start logs "started" once more: wait for the new line.
        before = proc.read_output().count(' started with drivers')
        proc = self._start_agent(host)
        deadline = time.monotonic() + 90
        while proc.read_output().count(' started with drivers') <= before:
            proc._check_alive()
            assert time.monotonic() < deadline, proc.tail()
            time.sleep(0.1)
        return proc

    # -- clients and checks -----------------------------------------------

    def admin(self, url=None):
        return cyborg_api.Client((url or self.cyborg_url) + '/v2',
                                 topo_mod.SERVICE_HEADERS)

    def ensure_profile(self, name, group):
        client = self.admin()
        listed = client.get('/device_profiles').json()['device_profiles']
        if name not in {p['name'] for p in listed}:
            resp = client.post('/device_profiles', json=[
                {'name': name, 'groups': [group]}])
            assert resp.status_code == 201, resp.text

    def deployable(self, name: str) -> dict:
        deps = self.admin().get('/deployables').json()['deployables']
        [dep] = [d for d in deps if d['name'] == name]
        return dep

    def rows(self, query: str, **params) -> list[dict]:
        with self.db.connect() as conn:
            return [dict(r._mapping) for r in
                    conn.execute(sa.text(query), params)]

    def check_invariants(self) -> list[str]:
        """Broken promises in the DB: ARQs stuck mid-bind, handles in use
        without one Bound ARQ, Bound ARQs without a handle in use."""
        problems = []
        for row in self.rows("SELECT uuid, state FROM extended_accelerator_"
                             "requests WHERE state IN ('BindStarted', "
                             "'Deleting')"):
            problems.append('ARQ %(uuid)s stuck in %(state)s' % row)
        for row in self.rows(
                "SELECT h.id, count(a.id) AS n, "
                "count(a.id) FILTER (WHERE a.state = 'Bound') AS bound "
                "FROM attach_handles h LEFT JOIN extended_accelerator_"
                "requests a ON a.attach_handle_id = h.id "
                "WHERE h.in_use GROUP BY h.id"):
            if row['n'] != 1 or row['bound'] != 1:
                problems.append('handle %(id)s in use by %(n)s ARQ(s), '
                                '%(bound)s Bound' % row)
        for row in self.rows(
                "SELECT a.uuid, a.attach_handle_id FROM extended_accelerator_"
                "requests a LEFT JOIN attach_handles h "
                "ON h.id = a.attach_handle_id "
                "WHERE a.state = 'Bound' AND (h.id IS NULL OR NOT h.in_use)"):
            problems.append('Bound ARQ %(uuid)s holds no handle' % row)
        for row in self.rows(
                "SELECT uuid, state FROM extended_accelerator_requests "
                "WHERE attach_handle_id IS NOT NULL AND state <> 'Bound'"):
            problems.append('%(state)s ARQ %(uuid)s keeps a handle' % row)
        return problems

    def arq_states(self, uuids) -> dict[str, str]:
        query = sa.text('SELECT uuid, state FROM extended_accelerator_'
                        'requests WHERE uuid IN :uuids').bindparams(
            sa.bindparam('uuids', expanding=True))
        with self.db.connect() as conn:
            return {r.uuid: r.state for r in
                    conn.execute(query, {'uuids': list(uuids)})}

    def delete_all_arqs(self) -> None:
        client = self.admin()
        for arq in client.get('/accelerator_requests').json()[
                'arqs']:
            client.delete('/accelerator_requests/' + arq['uuid'])


def new_instance() -> str:
    return str(uuid.uuid4())


class Calls:
    """HTTP calls to the API with what came back and how long it took.

    A call is *clean* when it answered an expected status (``ok``) or a
    503 whose body is the error envelope with a message, within
    ``limit`` seconds, and no body holds a traceback.
    """

    def __init__(self, limit: float = BROKER_FAULT_BOUND + LOADED_MACHINE
                 ) -> None:
        self.limit = limit
        self.records: list[dict] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def _session(self) -> requests.Session:
        if not hasattr(self._local, 'session'):
            self._local.session = requests.Session()
            self._local.session.headers.update(topo_mod.SERVICE_HEADERS)
        return self._local.session

    def do(self, method: str, url: str, ok=(200, 201, 202, 204),
           **kwargs) -> requests.Response | None:
        kwargs.setdefault('timeout', self.limit + 30)
        t0 = time.monotonic()
        resp, status, body = None, None, ''
        try:
            resp = self._session().request(method, url, **kwargs)
            status, body = resp.status_code, resp.text
        except requests.RequestException as exc:
            body = repr(exc)
        record = {'method': method, 'url': url, 'status': status,
                  'seconds': time.monotonic() - t0, 'body': body[:300],
                  'ok': status in ok}
        record['clean'] = record['ok'] or (
            status == 503 and _clean_envelope(body))
        if 'Traceback' in body or record['seconds'] > self.limit:
            record['clean'] = False
        with self._lock:
            self.records.append(record)
        return resp

    @property
    def count(self) -> int:
        return len(self.records)

    def unclean(self) -> list[dict]:
        return [r for r in self.records if not r['clean']]

    def statuses(self) -> dict:
        counts: dict = {}
        for r in self.records:
            counts[r['status']] = counts.get(r['status'], 0) + 1
        return counts


def _clean_envelope(body: str) -> bool:
    try:
        fault = json.loads(json.loads(body)['error_message'])
    except (ValueError, KeyError, TypeError):
        return False
    return bool(fault.get('faultstring'))


def arq_url(base: str) -> str:
    return base + '/v2/accelerator_requests'


def wait_for(predicate, timeout: float, interval: float = 0.2):
    """predicate()'s first truthy value; None after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


class _ClientThreads:
    """Client threads (``self._threads``) that run from ``with`` until
    ``self._stop`` is set at its end, given ``join_timeout`` seconds
    to finish their last request."""

    join_timeout = 60

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=self.join_timeout)


class Load(_ClientThreads):
    """Threads that create and list ARQs through both API servers until
    stopped; every call goes through a ``Calls``."""

    def __init__(self, topology, calls: Calls, threads: int = 4,
                 profile: str = PLAIN_DP) -> None:
        self.topology = topology
        self.calls = calls
        self.profile = profile
        self.created: list[str] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,),
                                          daemon=True)
                         for i in range(threads)]

    def _run(self, i: int) -> None:
        base = (self.topology.cyborg_url, self.topology.builtin_url)[i % 2]
        while not self._stop.is_set():
            resp = self.calls.do('POST', arq_url(base),
                                 json={'device_profile_name': self.profile})
            if resp is not None and resp.status_code == 201:
                self.created += [a['uuid'] for a in resp.json()['arqs']]
            self.calls.do('GET', arq_url(base))
            time.sleep(0.05)



def half_written(topology) -> list[str]:
    """ARQs whose row mixes states: Initial or BindFailed with a handle,
    Bound without its binding fields."""
    problems = []
    for row in topology.rows(
            "SELECT uuid, state FROM extended_accelerator_requests WHERE "
            "(state = 'Initial' AND (attach_handle_id IS NOT NULL OR "
            "instance_uuid IS NOT NULL)) OR (state = 'Bound' AND "
            "(hostname IS NULL OR device_rp_uuid IS NULL OR "
            "instance_uuid IS NULL OR attach_handle_id IS NULL))"):
        problems.append('%(state)s ARQ %(uuid)s half-written' % row)
    return problems


def api_recovered(topology, calls: Calls, timeout: float = 90) -> float:
    """Seconds until both API servers answer a create again."""
    t0 = time.monotonic()

    def works():
        return all(
            (calls.do('POST', arq_url(base), ok=(201, 503),
                      json={'device_profile_name': PLAIN_DP}) or
             requests.Response()).status_code == 201
            for base in (topology.cyborg_url, topology.builtin_url))
    assert wait_for(works, timeout, interval=1), 'the API did not recover'
    return time.monotonic() - t0


def max_wait(calls: Calls) -> float:
    return max((r['seconds'] for r in calls.records), default=0.0)


class Lifecycles(_ClientThreads):
    """Threads that run Nova's ARQ lifecycle over and over through both
    API servers, in a project of their own: create an ARQ, bind it with
    a service token, ask for it resolved, delete the instance's ARQs.
    Every call goes through a ``Calls``.

    A lifecycle that gets an error cleans up after itself (deletes its
    instance's ARQs, then its ARQs by UUID, until the API answers), so
    that after ``check`` every ARQ of the project is accounted for.
    """

    join_timeout = 180

    def __init__(self, topology, calls: Calls, threads: int = 8,
                 profile: str = PLAIN_DP) -> None:
        self.topology = topology
        self.calls = calls
        self.profile = profile
        self.project = 'rel-' + uuid.uuid4().hex[:8]
        self.headers = {'X-Project-Id': self.project}
        self.rp_uuid = topology.deployable(RACE_DEP)['rp_uuid']
        self.created: set[str] = set()
        self.failed_creates = 0
        # monotonic time of each completed lifecycle; failed steps.
        self.completed: list[float] = []
        self.failures: list[tuple[str, int | None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,),
                                          daemon=True)
                         for i in range(threads)]

    def _do(self, method, url, ok, **kwargs):
        resp = self.calls.do(method, url, ok=ok, headers=self.headers,
                             **kwargs)
        return resp, (resp.status_code if resp is not None else None)

    def _run(self, i: int) -> None:
        base = (self.topology.cyborg_url, self.topology.builtin_url)[i % 2]
        while not self._stop.is_set():
            step, status = self._lifecycle(arq_url(base))
            if step is None:
                with self._lock:
                    self.completed.append(time.monotonic())
            else:
                with self._lock:
                    self.failures.append((step, status))
                time.sleep(0.2)

    def _lifecycle(self, url):
        """(None, None) when the lifecycle completed, else the step that
        failed and its status."""
        resp, status = self._do('POST', url, (201,),
                                json={'device_profile_name': self.profile})
        if status != 201:
            with self._lock:
                self.failed_creates += 1
            return 'create', status
        uuids = [a['uuid'] for a in resp.json()['arqs']]
        with self._lock:
            self.created.update(uuids)
        instance = new_instance()
        _, status = self._do('PATCH', url, (202,),
                             json=cyborg_api.bind_patch(
                                 uuids, 'compute1', self.rp_uuid, instance))
        if status != 202:
            self._clean_up(url, instance, uuids)
            return 'bind', status
        resp, status = self._do('GET', url, (200,), params={
            'instance': instance, 'bind_state': 'resolved'})
        if status != 200 or {a['state'] for a in resp.json()['arqs']} != {
                'Bound'}:
            self._clean_up(url, instance, uuids)
            return 'resolve', status
        _, status = self._do('DELETE', url, (204,),
                             params={'instance': instance})
        if status != 204:
            self._clean_up(url, instance, uuids)
            return 'delete', status
        return None, None

    def _clean_up(self, url, instance, uuids):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _, status = self._do('DELETE', url, (204,),
                                 params={'instance': instance})
            if status == 204 and all(
                    self._do('DELETE', url + '/' + u, (204, 404))[1] in
                    (204, 404) for u in uuids):
                return
            time.sleep(0.5)

    def per_second(self, start: float, end: float) -> float:
        with self._lock:
            done = sum(1 for t in self.completed if start <= t < end)
        return done / max(end - start, 1e-9)

    def full_throughput_at(self, since: float, baseline: float,
                           share: float = 0.8) -> float | None:
        """The end of the first one-second window after ``since`` that
        completed at least ``share`` of ``baseline`` lifecycles."""
        with self._lock:
            times = sorted(t for t in self.completed if t >= since)
        for t in times:
            if sum(1 for u in times if t - 1 < u <= t) >= share * baseline:
                return t
        return None

    def check(self) -> dict:
        """What the database holds of the project: ARQs the clients
        created and did not see deleted (``left``), ARQs no client was
        answered for (``orphans``: a create answered 503 whose work was
        done), and orphans that are not plain Initial ARQs (``bad``)."""
        stored = self.topology.rows(
            'SELECT uuid, state, instance_uuid, attach_handle_id FROM '
            'extended_accelerator_requests WHERE project_id = :p',
            p=self.project)
        left = [r['uuid'] for r in stored if r['uuid'] in self.created]
        orphans = [r for r in stored if r['uuid'] not in self.created]
        bad = [r for r in orphans if r['state'] != 'Initial' or
               r['instance_uuid'] or r['attach_handle_id']]
        return {'left': left, 'orphans': [r['uuid'] for r in orphans],
                'bad': bad}



@contextlib.contextmanager
def arqs_locked(topology):
    """Hold an exclusive lock on the ARQ table: every conductor call that
    reads or writes ARQs waits, mid-call, until the block ends."""
    with topology.db.connect() as conn:
        conn.execute(sa.text('LOCK TABLE extended_accelerator_requests '
                             'IN ACCESS EXCLUSIVE MODE'))
        try:
            yield
        finally:
            conn.rollback()


def statements_waiting(topology, pid: int) -> int:
    """Statements of process ``pid`` that wait for a lock in the
    cyborg-lite database (matched by the client ports of its
    connections to PostgreSQL)."""
    ports = {c.laddr.port for c in
             psutil.Process(pid).net_connections(kind='tcp')
             if c.raddr and c.raddr.port == topology.servers.pg_port}
    waiting = topology.rows(
        "SELECT client_port FROM pg_stat_activity WHERE wait_event_type = "
        "'Lock' AND datname = current_database()")
    return sum(1 for row in waiting if row['client_port'] in ports)
