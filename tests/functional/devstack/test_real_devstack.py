"""devstack/plugin.sh run by devstack's own functions, as stack.sh,
unstack.sh and clean.sh run it (``DEVSTACK_DIR`` names a devstack tree;
skipped without it).

``devstack-phases.sh`` sources devstack (functions, stackrc, lib/database,
lib/rpc_backend, lib/keystone, lib/placement), loads the plugin's
settings and runs ``stack install``, ``stack post-config`` and ``stack
extra`` in one bash process, as stack.sh does, then ``unstack`` and
``clean`` in one each. Its header names what in it is not devstack's: a
launcher in systemd's place (``_run_under_systemd`` and ``$SYSTEMCTL``,
which ``run_process``, ``stop_process`` and ``service_check`` call), the
Keystone accounts that the checks use rather than all of
``create_keystone_accounts``, nova-compute's compute-node provider, and
a wait for openstack-cli-server.

This module gives it what a devstack host would have:

* a devstack tree: links to the files of ``$DEVSTACK_DIR`` (which is not
  written to) and a ``local.conf`` (``LOCAL_CONF``);
* the plugin's repository in ``$DEST/cyborg-lite``, as Zuul puts a
  job's projects there: a copy of this repository's working tree (its
  tracked and untracked files), so that what devstack writes there
  (``setup_develop``'s egg-info) stays out of this one; as the copy has
  no git history, ``PBR_VERSION`` gives pbr the version;
* Keystone 30 (``.venv-keystone``, see ``tests/functional/auth/
  keystone_server.py``) under ``/identity``, as behind devstack's web
  server, bootstrapped with ``ADMIN_PASSWORD`` and ``RegionOne``: what
  ``init_keystone``, ``start_keystone`` and ``bootstrap_keystone`` do;
* tools/test-setup.sh's PostgreSQL (``CYBORG_LITE_TEST_PG_URL``) and
  RabbitMQ (``CYBORG_LITE_TEST_RABBIT_URL``);
* Placement: placement_stub, in this process, under ``/placement`` as
  devstack's Placement is served, authenticating with Keystone as the
  ``placement`` user that devstack's ``create_placement_accounts`` makes
  and registers the endpoint of (``placement-api`` itself is not
  enabled: devstack installs it from git);
* devstack's global virtualenv (``GLOBAL_VENV=True``, its default) made
  beforehand with this project's virtualenv's packages visible in it (a
  ``.pth`` file): devstack's ``setup_develop`` installs cyborg-lite from
  ``$DEST/cyborg-lite`` into it for real (its console scripts are the
  services' programs), and ``pip_install`` finds the rest already there
  (cyborg-lite's dependencies, gunicorn, keystonemiddleware,
  python-memcached, python-openstackclient), so that no package is
  downloaded. The database driver, psycopg2, is the project's too
  (stack.sh's ``install_database_python`` is not run);
* ``$REQUIREMENTS_DIR`` without a clone of openstack/requirements (no
  git host is reachable): what devstack reads there, ``upper-
  constraints.txt`` (this project's ``constraints.txt``),
  ``global-requirements.txt`` (the names that ``pip_install_gr`` looks
  up) and ``.venv/bin/edit-constraints`` (which drops a package's line,
  as that tool of openstack/requirements does);
* python-openstackclient: this project's, which devstack's
  ``pip_install_gr python-openstackclient`` finds in the global
  virtualenv, served by devstack's ``openstack-cli-server`` (enabled, as
  in devstack's own CI jobs): devstack's ``openstack`` calls, about 30,
  take a fraction of a second each instead of one or two. The checks'
  ``openstack accelerator`` commands run ``CYBORG_LITE_TEST_LEGACY_OSC``
  (10.3.1 with python-cyborgclient's plugin) with devstack's
  clouds.yaml. openstack-cli-server's socket is ``/tmp/openstack.sock``,
  whoever runs it: two runs of this test at once on one host would
  share it;
* devstack's ``write_clouds_yaml`` removes ``~STACK_USER/.config/
  openstack/clouds.yaml``, an older file of devstack's: one that exists
  is put back afterwards.

The ``localrc`` settings that a single-node ``local.conf`` would not
have, each for a reason:

* ``DEST`` in the test's temporary directory, and under it
  ``DATA_DIR``, ``SERVICE_DIR`` (which stackrc derives from its own
  ``DEST`` before it reads ``localrc``) and ``CYBORG_LITE_CONF_DIR``:
  nothing is written to ``/opt`` or ``/etc``;
  ``STACK_USER``: the user running the test (stackrc's default for root
  is ``stack``);
* ``HOST_IP`` and ``SERVICE_HOST``: 127.0.0.1;
  ``KEYSTONE_SERVICE_HOST`` and ``PLACEMENT_SERVICE_HOST``: 127.0.0.1
  with the free port that each serves on instead of port 80;
* ``BASE_SQL_CONN``: the test PostgreSQL with its port (devstack's URL
  names none; ``PGPORT`` in the environment gives it to the ``psql``
  and ``createdb`` of ``recreate_database``), ``DATABASE_USER``
  postgres; ``CYBORG_LITE_DB_NAME`` a fresh name, dropped afterwards,
  as the server is shared;
* ``RABBIT_HOST``, ``RABBIT_USERID``, ``RABBIT_PASSWORD``: devstack's
  transport URL always names port 5672, so a forwarder listens on port
  5672 of a loopback address (127.0.0.2 or the next free one) and passes
  each connection to the test RabbitMQ, whose user is ``guest``;
* ``CYBORG_LITE_API_PORT``: a free port;
* a ``[[post-config|$CYBORG_LITE_CONF]]`` section (merged by devstack's
  ``merge_config_group``, as stack.sh does): ``[conductor] topic`` and
  ``[agent] topic`` with a random suffix, as the other tests keep apart
  on the shared RabbitMQ.
"""

import concurrent.futures
import importlib.metadata
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import uuid

import psutil
import pytest
import requests
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from placement_stub import conf as placement_conf
from placement_stub import deploy as placement_deploy
from placement_stub import server as placement_server
from tests.fixtures import databases
from tests.fixtures import processes
from tests.functional.auth import keystone_server

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
DEVSTACK_DIR = os.environ.get('DEVSTACK_DIR')
RABBIT_ENV = 'CYBORG_LITE_TEST_RABBIT_URL'
LEGACY_OSC = os.environ.get('CYBORG_LITE_TEST_LEGACY_OSC') or os.path.join(
    ROOT, '.venv-legacy-osc', 'bin', 'openstack')
SERVICES = ('cyborg-lite-api', 'cyborg-lite-cond', 'cyborg-lite-agent')
PROGRAMS = {'cyborg-lite-api': 'cyborg-lite-api',
            'cyborg-lite-cond': 'cyborg-lite-conductor',
            'cyborg-lite-agent': 'cyborg-lite-agent'}
SERVICE_PASSWORD = 'service-secret'
DATABASE_PASSWORD = 'database-secret'
# The names devstack's pip_install_gr looks up in global-requirements.txt
# (install_keystonemiddleware, python-openstackclient).
GLOBAL_REQUIREMENTS = ['keystonemiddleware', 'python-memcached',
                       'python-openstackclient']

# devstack's files/openstack-cli-server names it.
CLI_SERVER_SOCKET = '/tmp/openstack.sock'
SKIP_REASON = ('DEVSTACK_DIR is not set: no devstack tree to run the '
               'devstack plugin with')

# The run's local.conf; each {name} is this run's own value. The install
# guide (doc/source/install/devstack.rst) shows it, with those values in
# angle brackets.
LOCAL_CONF = """[[local|localrc]]
DEST={dest}
DATA_DIR=$DEST/data
SERVICE_DIR=$DEST/status
STACK_USER={user}
HOST_IP=127.0.0.1
SERVICE_HOST=127.0.0.1
ADMIN_PASSWORD={admin_password}
SERVICE_PASSWORD={service_password}
DATABASE_PASSWORD={database_password}
DATABASE_USER={pg_user}
BASE_SQL_CONN=postgresql://{pg_user}:{database_password}@{pg_host}:{pg_port}
RABBIT_HOST={rabbit_host}
RABBIT_USERID={rabbit_user}
RABBIT_PASSWORD={rabbit_password}
KEYSTONE_SERVICE_HOST=127.0.0.1:{keystone_port}
PLACEMENT_SERVICE_HOST=127.0.0.1:{placement_port}
ENABLED_SERVICES=key,rabbit,postgresql,openstack-cli-server
enable_plugin cyborg-lite file://{repository}
CYBORG_LITE_CONF_DIR=$DEST/etc/cyborg-lite
CYBORG_LITE_API_PORT={api_port}
CYBORG_LITE_DB_NAME={db_name}

[[post-config|$CYBORG_LITE_CONF]]
[conductor]
topic = cyborg-lite-conductor-{suffix}
[agent]
topic = cyborg-lite-agent-{suffix}
"""

EDIT_CONSTRAINTS = '''#!{python}
"""edit-constraints FILE -- NAME: drops NAME's line from FILE, as
openstack/requirements' edit-constraints does when given no
replacement."""
import re
import sys


def name(line):
    return re.sub(r'[-_.]+', '-', re.split(r'[<>=!~;\\s\\[]', line.strip(),
                                            maxsplit=1)[0]).lower()


path, _, package = sys.argv[1:4]
with open(path) as f:
    lines = f.readlines()
with open(path, 'w') as f:
    f.writelines(line for line in lines if name(line) != name(package))
'''


class Forwarder:
    """Port 5672 of a loopback address, each connection passed on to
    ``target`` (host, port)."""

    PORT = 5672

    def __init__(self, target):
        self.target = target
        self.sock = None
        for last in range(2, 255):
            sock = socket.socket()
            try:
                sock.bind(('127.0.0.%d' % last, self.PORT))
            except OSError:
                sock.close()
                continue
            self.sock = sock
            break
        if self.sock is None:
            raise RuntimeError('no loopback address has port %d free'
                               % self.PORT)
        self.sock.listen(64)
        self.host = self.sock.getsockname()[0]
        self._conns = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst),
                                 daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        for sock in [self.sock] + self._conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


def _kill_group(pid):
    """SIGKILL to a launched service's session, if it still runs."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def running(pid):
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Devstack:
    """A devstack host in ``tmp``; see the module."""

    def __init__(self, tmp):
        self.tmp = str(tmp)
        self.top = os.path.join(self.tmp, 'devstack')
        self.dest = os.path.join(self.tmp, 'stack')
        self.data = os.path.join(self.dest, 'data')
        self.venv = os.path.join(self.data, 'venv')
        self.status = os.path.join(self.dest, 'status')
        self.conf_dir = os.path.join(self.dest, 'etc', 'cyborg-lite')
        self.conf = os.path.join(self.conf_dir, 'cyborg-lite.conf')
        self.clouds = os.path.join(self.dest, 'etc', 'openstack',
                                   'clouds.yaml')
        self.suffix = uuid.uuid4().hex[:8]
        self.db_name = 'cyborg_lite_devstack_' + self.suffix
        self.hostname = socket.gethostname()
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.keystone = None
        self.forwarder = None
        self.placement = None
        self.pids = {}
        self.launched = {}
        self.stacked = False
        self.started_at = None
        self._saved_clouds = None

    # -- the host ---------------------------------------------------------

    def prepare(self):
        pg = sa.engine.make_url(databases.pg_server_url())
        rabbit = sa.engine.make_url(os.environ[RABBIT_ENV])
        self.pg = pg
        self.keystone = keystone_server.Keystone(
            keystone_server.keystone_python(),
            self._mkdir('keystone'), prefix='/identity')
        # Keystone starts (its database, keys and bootstrap: seconds of
        # its own processes) while the rest is made.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            started = pool.submit(self.keystone.start)
            self.forwarder = Forwarder((rabbit.host, rabbit.port))
            self._make_venv()
            self._make_requirements_dir()
            self._copy_repository()
            started.result()
        self.keystone_uri = 'http://127.0.0.1:%d/identity' % (
            self.keystone.port)
        self._start_placement()
        self.api_port = processes.free_port()
        self._write_tree(pg, rabbit)
        self._save_user_clouds()

    def _copy_repository(self):
        """This repository's working tree (tracked and untracked files,
        not what git ignores) in ``$DEST/cyborg-lite``."""
        files = subprocess.run(
            ['git', '-C', ROOT, 'ls-files', '-z', '--cached', '--others',
             '--exclude-standard'], check=True,
            capture_output=True).stdout.decode().split('\0')
        dest = os.path.join(self.dest, 'cyborg-lite')
        for name in filter(None, files):
            source = os.path.join(ROOT, name)
            if not os.path.isfile(source):
                continue  # deleted in the working tree
            os.makedirs(os.path.dirname(os.path.join(dest, name)),
                        exist_ok=True)
            shutil.copy2(source, os.path.join(dest, name))

    def _mkdir(self, *parts):
        path = os.path.join(self.tmp, *parts)
        os.makedirs(path, exist_ok=True)
        return path

    def _start_placement(self):
        conf_file = os.path.join(self._mkdir('placement'), 'placement.conf')
        processes.write_config(conf_file, {
            'api': {'auth_strategy': 'keystone'},
            'placement_database': {'connection': 'sqlite:///%s' % (
                os.path.join(self.tmp, 'placement', 'placement.sqlite'))},
            'placement': {'sync_on_startup': True},
            # What devstack's create_placement_conf writes
            # (configure_keystone_authtoken_middleware ... placement).
            'keystone_authtoken': {
                'auth_type': 'password', 'interface': 'public',
                'auth_url': self.keystone_uri, 'username': 'placement',
                'password': SERVICE_PASSWORD,
                'user_domain_name': 'Default', 'project_name': 'service',
                'project_domain_name': 'Default',
                'www_authenticate_uri': self.keystone_uri}})
        conf = placement_conf.build_conf(default_config_files=[conf_file])
        app = keystone_server.mounted(placement_deploy.deploy(conf),
                                      '/placement')
        self.placement = placement_server.Server(app, '127.0.0.1', 0).start()
        self.placement_url = 'http://127.0.0.1:%d/placement' % (
            self.placement.port)

    def local_conf(self, pg, rabbit):
        return LOCAL_CONF.format(
            dest=self.dest, user=self.user,
            admin_password=keystone_server.ADMIN_PASSWORD,
            service_password=SERVICE_PASSWORD,
            database_password=DATABASE_PASSWORD, pg_user=pg.username,
            pg_host=pg.host, pg_port=pg.port,
            rabbit_host=self.forwarder.host, rabbit_user=rabbit.username,
            rabbit_password=rabbit.password,
            keystone_port=self.keystone.port,
            placement_port=self.placement.port, repository=ROOT,
            api_port=self.api_port, db_name=self.db_name,
            suffix=self.suffix)

    def _write_tree(self, pg, rabbit):
        os.makedirs(self.top)
        own = {'local.conf', 'localrc', '.localrc.auto', '.localrc.password',
               '.stackenv'}
        devstack_dir = os.path.abspath(DEVSTACK_DIR)
        for name in os.listdir(devstack_dir):
            if name not in own:
                os.symlink(os.path.join(devstack_dir, name),
                           os.path.join(self.top, name))
        with open(os.path.join(self.top, 'local.conf'), 'w') as f:
            f.write(self.local_conf(pg, rabbit))

    def _make_venv(self):
        # The interpreter this project's virtualenv was made from.
        base = getattr(sys, '_base_executable', sys.executable)
        subprocess.run([base, '-m', 'venv', self.venv], check=True,
                       capture_output=True)
        purelib = subprocess.run(
            [os.path.join(self.venv, 'bin', 'python'), '-c',
             'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
            check=True, capture_output=True, text=True).stdout.strip()
        with open(os.path.join(purelib, 'zz-cyborg-lite-test.pth'), 'w') as f:
            f.write('import site; site.addsitedir(%r)\n'
                    % sysconfig.get_paths()['purelib'])

    def _make_requirements_dir(self):
        req = os.path.join(self.dest, 'requirements')
        bindir = os.path.join(req, '.venv', 'bin')
        os.makedirs(bindir)
        shutil.copy(os.path.join(ROOT, 'constraints.txt'),
                    os.path.join(req, 'upper-constraints.txt'))
        with open(os.path.join(req, 'global-requirements.txt'), 'w') as f:
            f.write('\n'.join(GLOBAL_REQUIREMENTS) + '\n')
        tool = os.path.join(bindir, 'edit-constraints')
        with open(tool, 'w') as f:
            f.write(EDIT_CONSTRAINTS.format(python=sys.executable))
        os.chmod(tool, 0o755)

    def _user_clouds(self):
        # write_clouds_yaml removes ~STACK_USER/.config/openstack/
        # clouds.yaml, as devstack cleans up its older files.
        return os.path.join(os.path.expanduser('~' + self.user), '.config',
                            'openstack', 'clouds.yaml')

    def _save_user_clouds(self):
        path = self._user_clouds()
        if os.path.exists(path):
            with open(path, 'rb') as f:
                self._saved_clouds = f.read()

    def _restore_user_clouds(self):
        path = self._user_clouds()
        if self._saved_clouds is not None and not os.path.exists(path):
            with open(path, 'wb') as f:
                f.write(self._saved_clouds)

    # -- running devstack -------------------------------------------------

    def env(self):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('OS_', 'VIRTUAL_ENV', 'PYTHON'))}
        env['PGPORT'] = str(self.pg.port)
        # What pbr would read from git, which the copy has not.
        env['PBR_VERSION'] = importlib.metadata.version('cyborg-lite')
        return env

    def run(self, mode, timeout=300):
        log = os.path.join(self.tmp, '%s.log' % mode)
        with open(log, 'w') as out:
            result = subprocess.run(
                ['bash', os.path.join(HERE, 'devstack-phases.sh'), self.top,
                 mode], env=self.env(), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, timeout=timeout)
        with open(log) as f:
            output = f.read()
        assert result.returncode == 0, '%s failed (%s):\n%s%s' % (
            mode, log, output[-6000:], self.service_logs())
        return output

    def read_pids(self, services=SERVICES):
        """{service: PID} of the launcher's PID files; all of them with
        ``services=None``."""
        pids = {}
        names = os.listdir(self.status) if os.path.isdir(self.status) else []
        for name in names:
            service, ext = os.path.splitext(name)
            if ext == '.pid' and (services is None or service in services):
                with open(os.path.join(self.status, name)) as f:
                    pids[service] = int(f.read())
        return pids

    def service_logs(self):
        text = ''
        for service in SERVICES:
            path = os.path.join(self.status, service + '.log')
            if os.path.exists(path):
                with open(path) as f:
                    text += '\n--- %s ---\n%s' % (service, f.read()[-3000:])
        return text

    def stack(self):
        self.started_at = time.time()
        try:
            self.run('stack')
        finally:
            self.launched = self.read_pids(None)
            self.pids = self.read_pids()
        self.stacked = True

    def osc(self, cloud, *args):
        env = self.env()
        env['OS_CLIENT_CONFIG_FILE'] = self.clouds
        return subprocess.run([LEGACY_OSC, '--os-cloud', cloud, *args],
                              env=env, capture_output=True, text=True,
                              timeout=120)

    # -- tokens -----------------------------------------------------------

    def token(self, user, project, password=None):
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': user, 'domain': {'id': 'default'},
                'password': password or keystone_server.ADMIN_PASSWORD}}},
            'scope': {'project': {'name': project,
                                  'domain': {'id': 'default'}}}}}
        resp = requests.post(self.keystone.url + '/auth/tokens', json=body,
                             timeout=30)
        assert resp.status_code == 201, resp.text
        return resp.headers['X-Subject-Token'], resp.json()['token']

    # -- the end ----------------------------------------------------------

    def cleanup(self):
        try:
            if self.stacked and any(running(p)
                                    for p in self.launched.values()):
                try:
                    self.run('unstack')
                except AssertionError:
                    pass
        finally:
            for pid in self.launched.values():
                _kill_group(pid)
            if self.placement is not None:
                self.placement.stop()
            if self.forwarder is not None:
                self.forwarder.stop()
            if self.keystone is not None:
                self.keystone.stop()
            self._drop_database()
            self._restore_user_clouds()
            self._remove_cli_server_socket()

    def _remove_cli_server_socket(self):
        # openstack-cli-server leaves its socket behind; this run's (made
        # since it stacked) goes.
        try:
            made = os.stat(CLI_SERVER_SOCKET).st_mtime
        except FileNotFoundError:
            return
        if self.started_at is not None and made >= self.started_at:
            os.unlink(CLI_SERVER_SOCKET)

    def _drop_database(self):
        admin = sa.create_engine(databases.pg_server_url(),
                                 isolation_level='AUTOCOMMIT')
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS %s WITH (FORCE)'
                                     % self.db_name)
        finally:
            admin.dispose()


def _skip_without_peers():
    databases.require_pg()
    if not os.environ.get(RABBIT_ENV):
        pytest.skip('%s is not set: no RabbitMQ' % RABBIT_ENV)
    if keystone_server.keystone_python() is None:
        pytest.skip('Keystone is not installed (tools/run-tests.sh puts it '
                    'in .venv-keystone)')
    if not os.path.exists(LEGACY_OSC):
        pytest.skip('no python-openstackclient with python-cyborgclient '
                    '(CYBORG_LITE_TEST_LEGACY_OSC)')
    if shutil.which('git') is None or subprocess.run(
            ['git', '-C', ROOT, 'rev-parse'],
            capture_output=True).returncode != 0:
        pytest.skip('not a git checkout: the test copies the working tree '
                    'that git lists')
    if subprocess.run(['sudo', '-n', 'true'],
                      capture_output=True).returncode != 0:
        pytest.skip('devstack needs sudo without a password')
    if not os.path.isfile(os.path.join(DEVSTACK_DIR, 'functions')):
        pytest.fail('DEVSTACK_DIR=%s is not a devstack tree (no functions '
                    'file)' % DEVSTACK_DIR)


@pytest.fixture(scope='module')
def devstack(tmp_path_factory):
    if not DEVSTACK_DIR:
        pytest.skip(SKIP_REASON)
    _skip_without_peers()
    host = Devstack(tmp_path_factory.mktemp('devstack'))
    try:
        host.prepare()
        host.stack()
        yield host
    finally:
        host.cleanup()


def read_ini(path):
    """{section: {option: value}} as written, DEFAULT's options in
    DEFAULT only; every line a section, an ``option = value`` or blank,
    as devstack's iniset writes them."""
    sections = {}
    section = None
    with open(path) as f:
        for line in f.read().splitlines():
            if not line.strip():
                continue
            if line.startswith('[') and line.endswith(']'):
                section = sections.setdefault(line[1:-1], {})
                continue
            option, sep, value = line.partition(' = ')
            assert sep and section is not None, line
            assert option not in section, line
            section[option] = value
    return sections


def test_config_is_what_devstack_wrote(devstack):
    pg = devstack.pg
    ks = devstack.keystone_uri
    client = {'auth_type': 'password', 'auth_url': ks,
              'username': 'cyborg', 'password': SERVICE_PASSWORD,
              'project_name': 'service', 'user_domain_name': 'Default',
              'project_domain_name': 'Default', 'region_name': 'RegionOne'}
    assert read_ini(devstack.conf) == {
        'DEFAULT': {
            'debug': 'True',
            'transport_url': 'rabbit://guest:guest@%s:5672/' % (
                devstack.forwarder.host)},
        'database': {'connection': (
            'postgresql://%s:%s@%s:%d/%s?client_encoding=utf8' % (
                pg.username, DATABASE_PASSWORD, pg.host, pg.port,
                devstack.db_name))},
        'api': {'host_ip': '127.0.0.1', 'port': str(devstack.api_port),
                'auth_strategy': 'keystone'},
        'keystone_authtoken': {
            'auth_type': 'password', 'interface': 'public',
            'auth_url': ks, 'username': 'cyborg',
            'password': SERVICE_PASSWORD, 'user_domain_name': 'Default',
            'project_name': 'service', 'project_domain_name': 'Default',
            'www_authenticate_uri': ks,
            'cafile': os.path.join(devstack.data, 'ca-bundle.pem'),
            'memcached_servers': 'localhost:11211',
            'service_token_roles_required': 'True',
            'service_token_roles': 'service'},
        'placement': client,
        'nova': client,
        'agent': {'resource_provider_name': devstack.hostname,
                  'enabled_drivers': 'fake', 'root_helper': 'sudo',
                  'topic': 'cyborg-lite-agent-' + devstack.suffix},
        'conductor': {'topic': 'cyborg-lite-conductor-' + devstack.suffix},
    }
    # And cyborg-lite reads it.
    conf = cl_conf.build_conf(default_config_files=[devstack.conf])
    assert conf.api.auth_strategy == 'keystone'
    assert conf.agent.resource_provider_name == devstack.hostname


def test_services_run_the_plugins_command_lines(devstack):
    assert sorted(devstack.pids) == sorted(SERVICES)
    for service, pid in devstack.pids.items():
        assert running(pid), service + devstack.service_logs()
        argv = psutil.Process(pid).cmdline()
        # A console script: its interpreter, then the script.
        assert argv[1:] == [
            os.path.join(devstack.venv, 'bin', PROGRAMS[service]),
            '--config-file', devstack.conf], argv


def test_accelerator_endpoint_answers_the_demo_projects_member(devstack):
    # The demo user's token in the demo project (clouds.yaml's
    # "devstack" cloud): a member, whose catalog has the plugin's
    # endpoint.
    token, body = devstack.token('demo', 'demo')
    roles = {r['name'] for r in body['roles']}
    assert 'member' in roles and not roles & {'admin', 'manager'}, roles
    urls = [e['url'] for s in body['catalog'] if s['type'] == 'accelerator'
            for e in s['endpoints'] if e['interface'] == 'public']
    assert urls == ['http://127.0.0.1:%d/v2' % devstack.api_port]
    # The openstack CLI with devstack's clouds.yaml, through the
    # catalog: device profiles are for every project's readers.
    listed = devstack.osc('devstack', 'accelerator', 'device', 'profile',
                          'list', '-f', 'json')
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    # Devices are for a project manager or an admin.
    resp = requests.get(urls[0] + '/devices',
                        headers={'X-Auth-Token': token}, timeout=30)
    assert resp.status_code == 403, resp.text


def _wait_for_devices(devstack, token):
    url = 'http://127.0.0.1:%d/v2/devices' % devstack.api_port
    deadline = time.monotonic() + 60
    while True:
        resp = requests.get(url, headers={'X-Auth-Token': token},
                            timeout=30)
        assert resp.status_code == 200, resp.text
        devices = resp.json()['devices']
        if len(devices) == 2 or time.monotonic() > deadline:
            return devices
        time.sleep(1)


def test_agent_devices_reach_the_api_and_placement(devstack):
    token, _ = devstack.token('admin', 'demo')
    devices = _wait_for_devices(devstack, token)
    assert len(devices) == 2, devstack.service_logs()
    # Its first report was answered: a conductor listened before the
    # agent started.
    with open(os.path.join(devstack.status, 'cyborg-lite-agent.log')) as f:
        assert 'got no answer' not in f.read()
    # The admin of the demo project, through the catalog (clouds.yaml's
    # "devstack-admin-demo").
    listed = devstack.osc('devstack-admin-demo', 'accelerator', 'device',
                          'list', '-f', 'json')
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert sorted(r['type'] for r in rows) == ['FPGA', 'GPU']
    assert {r['hostname'] for r in rows} == {devstack.hostname}

    headers = {'X-Auth-Token': token,
               'OpenStack-API-Version': 'placement 1.14'}
    url = devstack.placement_url + '/resource_providers'
    resp = requests.get(url, params={'name': devstack.hostname},
                        headers=headers, timeout=30)
    assert resp.status_code == 200, resp.text
    root = resp.json()['resource_providers'][0]['uuid']
    resp = requests.get(url, params={'in_tree': root}, headers=headers,
                        timeout=30)
    children = [rp for rp in resp.json()['resource_providers']
                if rp['uuid'] != root]
    classes = set()
    for rp in children:
        inv = requests.get('%s/%s/inventories' % (url, rp['uuid']),
                           headers=headers, timeout=30).json()
        classes |= set(inv['inventories'])
    assert classes == {'FPGA', 'PGPU'}, children


def test_unstack_stops_everything_and_clean_removes_the_config(devstack):
    pids = dict(devstack.pids)
    assert all(running(pid) for pid in pids.values())
    output = devstack.run('unstack')
    # Each stopped on SIGTERM, as systemd stops devstack's units.
    stopped = [line for line in output.splitlines()
               if line.startswith('launcher: ')]
    assert len(stopped) == len(SERVICES) + 1, output
    assert not [line for line in stopped if 'killed' in line], output
    assert not [s for s, pid in pids.items() if running(pid)]
    assert devstack.read_pids(None) == {}
    left = [p.info for p in psutil.process_iter(['pid', 'cmdline'])
            if devstack.conf in (p.info['cmdline'] or [])
            and running(p.info['pid'])]
    assert left == []
    assert os.path.exists(devstack.conf)
    devstack.run('clean')
    assert not os.path.exists(devstack.conf_dir)


def _guide_local_conf():
    """The literal block of the install guide's devstack page that shows
    the tested local.conf."""
    with open(os.path.join(ROOT, 'doc', 'source', 'install',
                           'devstack.rst')) as f:
        lines = f.read().splitlines()
    blocks, block = [], None
    for line in lines:
        if block is not None:
            if line.startswith('    ') or not line.strip():
                block.append(line[4:])
                continue
            blocks.append('\n'.join(block).strip('\n'))
            block = None
        if line.endswith('::'):
            block = []
    return next(b for b in blocks if '\nDEST=' in b)


def test_install_guide_shows_the_tested_local_conf():
    guide = _guide_local_conf().splitlines()
    tested = LOCAL_CONF.strip('\n').splitlines()
    assert len(guide) == len(tested), guide
    for shown, line in zip(guide, tested, strict=True):
        # Each {name} of the run is "<...>" in the guide, or a value.
        pattern = '.+'.join(re.escape(part)
                            for part in re.split(r'\{\w+\}', line))
        assert re.fullmatch(pattern, shown), (shown, line)
