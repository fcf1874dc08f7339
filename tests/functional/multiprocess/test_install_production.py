"""The install guide's production mode, run as written.

The commands and configuration files are read from the literal blocks
of ``doc/source/install/production.rst``, so that a change there that
breaks a deployment fails here. Every
service runs as the guide configures it, in keystone mode, against the real
Keystone of the tests (its service users ``placement``, ``cyborg`` and
``nova`` have the ``service`` role). What a loopback test must change is
changed explicitly, by the tables below: host names and ports (loopback,
free ports), Keystone's URL and each service user's password, the paths
under ``/etc``, ``/var/log`` and ``/run`` (a temporary directory), the
database and RabbitMQ URLs (``tools/test-setup.sh``'s servers),
Placement's endpoint (this Keystone's catalog has none), per-run RPC
topics (the broker is shared), the agent's sysfs root (a fixture tree of
a T4 host) and the libvirt URI (``test:///default``: there is no
hypervisor here).

The agent runs as an unprivileged user (``nobody`` stands for the
guide's ``cyborg``) with the guide's sudoers line, so that its mdev
writes go through oslo.privsep daemons started with sudo; this part is
skipped where the tests do not run as root or sudo is missing.

Then a Nova-style lifecycle with Keystone tokens: a device profile (an
admin's), ``nova-shim ... boot --device-profile`` with a member's
openrc, the server ACTIVE with its ARQ Bound (the conductor's event
reached the compute API with its own token), its deletion (ARQ gone,
Placement allocation freed), and the ARQ lifecycle that Nova drives
itself (create, bind with a service token, poll ``?instance=&bind_state=
resolved``, delete). Last, every process gets SIGTERM and must exit
within 6 s.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

import psutil
import pytest
import requests

from tests.fixtures import databases
from tests.fixtures import processes
from tests.fixtures import sysfs_tree
from tests.functional.auth import conftest as identities
from tests.functional.multiprocess import conftest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PAGE = os.path.join(REPO, 'doc', 'source', 'install', 'production.rst')


def _load(name: str, path: str):
    """A module of the guide's Sphinx extensions, by its path."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# How the docs build reads the guide's literal blocks.
rst_blocks = _load('rst_blocks', os.path.join(
    REPO, 'doc', 'source', '_exts', 'rst_blocks.py'))
SECTION = 'Production mode'
# The agent's fixture host: a T4 whose vGPU type the guide's agent.conf
# enables.
AGENT_TREE = 't4_vgpu'
DEVICE_PROFILE = 'readme-vgpu'
STOP_WITHIN = 6.0
# The member whose openrc boots the guest.
USER = 'alice'
# Who runs the agent: the guide's ``cyborg``.
AGENT_USER = 'nobody'
# Its sudoers line names the privsep helper of the guide's install.
GUIDE_BIN = '/opt/cyborg-lite/.venv/bin/'


# -- reading the install guide -----------------------------------------


def production_section(text: str) -> str:
    """The text of the "Production mode" section, up to the next
    section title."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line == SECTION and set(lines[i + 1]) == {'='}:
            start = i + 2
            break
    else:
        raise AssertionError('%s has no %r section' % (PAGE, SECTION))
    for j in range(start, len(lines) - 1):
        if lines[j] and lines[j + 1] and set(lines[j + 1]) == {'='} and \
                len(lines[j + 1]) >= len(lines[j]):
            return '\n'.join(lines[start:j])
    return '\n'.join(lines[start:])


def steps(section: str) -> dict[int, str]:
    """The numbered steps (``N. **Title**``) of the section."""
    parts = re.split(r'^(\d+)\. \*\*', section, flags=re.M)
    return {int(num): body for num, body in zip(parts[1::2], parts[2::2],
                                                 strict=True)}


def ini_blocks(text: str) -> list[str]:
    return [b for b in rst_blocks.literal_blocks(text)
            if rst_blocks.is_ini(b)]


def sudoers_blocks(text: str) -> list[str]:
    return [b for b in rst_blocks.literal_blocks(text)
            if rst_blocks.is_sudoers(b)]


def command_blocks(text: str) -> list[tuple[dict[str, str], list[str]]]:
    found = []
    for block in rst_blocks.literal_blocks(text):
        if not rst_blocks.is_ini(block) and \
                not rst_blocks.is_sudoers(block):
            found += rst_blocks.commands(block)
    return found


def find_command(text: str, name: str, *words: str):
    """The one command of ``text``'s literal blocks that runs ``name``
    (with ``words`` among its arguments)."""
    found = [(env, argv) for env, argv in command_blocks(text)
             if argv[0] == name and all(w in argv for w in words)]
    assert len(found) == 1, (name, words, command_blocks(text))
    return found[0]


ini_values = rst_blocks.ini_values


def edit_ini(block: str, changes: dict[tuple[str, str], object]) -> str:
    """``block`` with each ``(section, option)`` of ``changes`` set (the
    the guide's line replaced, or one added), or removed where the value
    is None."""
    pending = dict(changes)
    out = []
    section = None

    def flush(section):
        for (sec, key), value in list(pending.items()):
            if sec == section:
                if value is not None:
                    out.append('%s = %s' % (key, _ini_value(value)))
                del pending[(sec, key)]

    for line in block.splitlines():
        match = re.match(r'^\[(.+)\]$', line.strip())
        if match:
            flush(section)
            section = match.group(1)
            out.append(line)
            continue
        key = line.partition('=')[0].strip()
        if '=' in line and not line.lstrip().startswith('#') and \
                (section, key) in pending:
            value = pending.pop((section, key))
            if value is not None:
                out.append('%s = %s' % (key, _ini_value(value)))
            continue
        out.append(line)
    flush(section)
    for sec in dict.fromkeys(s for s, _k in pending):
        out.append('[%s]' % sec)
        flush(sec)
    return '\n'.join(out) + '\n'


def _ini_value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ','.join(str(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def test_the_config_blocks_are_read_as_written():
    """oslo.config takes the rest of an option's line as its value; a
    block of the guide with a trailing comment would hand it to the
    service."""
    with open(PAGE) as f:
        section = production_section(f.read())
    blocks = ini_blocks(section)
    assert len(blocks) >= 3
    for block in blocks:
        for (group, option), value in ini_values(block).items():
            assert '#' not in value, (group, option, value)
    for number, text in steps(section).items():
        if number == 1:
            continue  # database URLs, not commands
        for _env, argv in command_blocks(text):
            # Every command the section runs is one of this project's or
            # gunicorn.
            processes.script(argv[0])


# -- the deployment ----------------------------------------------------


class ReadmeDeployment:
    """The services of the install guide's production mode, one process
    each,
    started by its commands."""

    def __init__(self, tmp: str, rabbit_url: str, keystone) -> None:
        self.tmp = tmp
        self.rabbit_url = rabbit_url
        self.keystone = keystone
        self.group = processes.ProcessGroup(tmp)
        self.stack = contextlib.ExitStack()
        self.suffix = uuid.uuid4().hex[:8]
        with open(PAGE) as f:
            self.steps = steps(production_section(f.read()))
        self.used: set[str] = set()
        self.conductors: list[processes.ServiceProcess] = []

    # -- the explicit substitutions --------------------------------

    def _replacements(self) -> dict[str, str]:
        """The guide's placeholder -> what this loopback run uses."""
        etc = os.path.join(self.tmp, 'etc')
        return {
            # Addresses: everything on loopback, on free ports.
            '0.0.0.0:6666': '127.0.0.1:%d' % self.api_port,
            'cyborg.example.com:6666': '127.0.0.1:%d' % self.api_port,
            '0.0.0.0:8778': '127.0.0.1:%d' % self.placement_port,
            'compute.example.com:8774': '127.0.0.1:%d' % self.nova_port,
            '--port 8778': '--port %d' % self.placement_port,
            '--host 0.0.0.0': '--host 127.0.0.1',
            'https://keystone.example.com/v3': self.keystone.url,
            # Servers: tools/test-setup.sh's, a database each.
            'rabbit://cyborg:PASS@rabbit.example.com:5672/': self.rabbit_url,
            'postgresql+psycopg://cyborg:PASS@db/cyborg_lite': self.cyborg_db,
            'postgresql+psycopg://placement:PASS@db/placement':
                self.placement_db,
            'postgresql+psycopg://nova:PASS@db/nova_shim': self.nova_db,
            # Paths.
            '/etc/cyborg-lite/': etc + '/cyborg-lite/',
            '/etc/placement-stub/': etc + '/placement-stub/',
            '/etc/nova-shim/': etc + '/nova-shim/',
            '/var/log/cyborg-lite/': os.path.join(self.tmp, 'log') + '/',
            '/run/placement-stub/': os.path.join(self.tmp, 'run') + '/',
            # The agent's user and the privsep helper of this install.
            'cyborg ALL = (root)': '%s ALL = (root)' % AGENT_USER,
            GUIDE_BIN: processes.BIN_DIR + '/',
        }

    def credentials(self, block: str) -> dict[tuple[str, str], str]:
        """The password of each section's service user in this Keystone
        (the guide's ``PASS``), as ``edit_ini`` changes."""
        values = ini_values(block)
        return {(section, 'password'): identities.PASSWORD % user
                for (section, option), user in values.items()
                if option == 'username'
                and values.get((section, 'password')) == 'PASS'}

    def headers(self, user: str, service: bool = False) -> dict:
        """A Keystone user's token (and Nova's service token)."""
        return self.keystone.headers(user, service)

    def sub(self, text: str) -> str:
        for old, new in self._replacements().items():
            if old in text:
                self.used.add(old)
                text = text.replace(old, new)
        return text

    def argv(self, command) -> tuple[dict[str, str], list[str]]:
        """A command of the guide with the substitutions; the program from
        this environment's bin directory."""
        env, argv = command
        argv = shlex.split(self.sub(shlex.join(argv)))
        env = {k: self.sub(v) for k, v in env.items()}
        return env, processes.script(argv[0]) + argv[1:]

    def write(self, path: str, text: str) -> str:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        return path

    # -- start -------------------------------------------------------

    def start(self) -> 'ReadmeDeployment':
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        # 1. Messaging and databases: tools/test-setup.sh's servers.
        self.placement_db = self.stack.enter_context(databases.pg_database())
        self.cyborg_db = self.stack.enter_context(databases.pg_database())
        self.nova_db = self.stack.enter_context(databases.pg_database())
        self.api_port = processes.free_port()
        self.placement_port = processes.free_port()
        self.nova_port = processes.free_port()
        self.cyborg_url = 'http://127.0.0.1:%d' % self.api_port
        self.placement_url = 'http://127.0.0.1:%d' % self.placement_port
        self.nova_url = 'http://127.0.0.1:%d/v2.1' % self.nova_port
        os.makedirs(os.path.join(self.tmp, 'log'))
        self._placement(self.steps[2])
        self._cyborg_conf(self.steps[3])
        self._conductors(self.steps[4])
        self._api(self.steps[5])
        self._nova_shim(self.steps[6])
        self._agent(self.steps[7])
        unused = set(self._replacements()) - self.used - {
            # placement-stub-api's; the test runs gunicorn.
            '--port 8778', '--host 0.0.0.0'}
        assert not unused, ('The install guide no longer has these; update '
                            'the substitutions: %s' % sorted(unused))

    def _placement(self, text: str) -> None:
        [conf_block] = ini_blocks(text)
        assert ini_values(conf_block)[('placement', 'sync_on_startup')] == \
            'false'
        assert ini_values(conf_block)[('api', 'auth_strategy')] == \
            'keystone'
        conf = self.sub('/etc/placement-stub/placement-stub.conf')
        self.write(conf, edit_ini(self.sub(conf_block),
                                  self.credentials(conf_block)))
        env, argv = self.argv(find_command(text, 'placement-stub-manage'))
        self.group.run(argv, env=env)
        # placement-stub-api's line must at least name real options.
        env, argv = self.argv(find_command(text, 'placement-stub-api'))
        self.group.run(argv + ['--help'], env=env)
        env, argv = self.argv(find_command(
            text, 'gunicorn', 'placement_stub.wsgi:application'))
        self.placement = self.group.start('placement-gunicorn', argv,
                                          env=env)
        self.placement.wait_for_http(self.placement_url + '/healthcheck')
        self.group._remember(self.placement.pid)

    def _cyborg_conf(self, text: str) -> None:
        [conf_block] = ini_blocks(text)
        self.conf = self.sub('/etc/cyborg-lite/cyborg-lite.conf')
        assert ini_values(conf_block)[('api', 'auth_strategy')] == \
            'keystone'
        self.write(self.conf, edit_ini(self.sub(conf_block), {
            **self.credentials(conf_block),
            # This Keystone's catalog has no Placement.
            ('placement', 'endpoint_override'): self.placement_url,
            # The broker is shared with other test runs.
            ('conductor', 'topic'): 'cyborg-lite-conductor-' + self.suffix,
            ('agent', 'topic'): 'cyborg-lite-agent-' + self.suffix}))
        self.log_file = self.sub('/var/log/cyborg-lite/cyborg-lite.log')
        env, argv = self.argv(find_command(text, 'cyborg-lite-dbsync',
                                           'upgrade'))
        self.group.run(argv, env=env)
        env, argv = self.argv(find_command(text, 'cyborg-lite-status',
                                           'upgrade', 'check'))
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=60, env=dict(os.environ, **env))
        # 0: the schema is at the newest migration, no policy warnings.
        assert result.returncode == 0, result.stdout + result.stderr

    def _conductors(self, text: str) -> None:
        command = self.argv(find_command(text, 'cyborg-lite-conductor'))
        for name in ('conductor-1', 'conductor-2'):
            env, argv = command
            self.conductors.append(self.group.start(name, argv, env=env))
        for proc in self.conductors:
            proc.wait_for_line(r'listening on topic', timeout=60)

    def _api(self, text: str) -> None:
        env, argv = self.argv(find_command(
            text, 'gunicorn', 'cyborg_lite.api.wsgi:application'))
        assert env == {'CYBORG_LITE_CONFIG_FILES': self.conf}, env
        self.api = self.group.start('api-gunicorn', argv, env=env)
        self.api.wait_for_http(self.cyborg_url + '/healthcheck', timeout=60)
        self.group._remember(self.api.pid)

    def _nova_shim(self, text: str) -> None:
        [conf_block] = ini_blocks(text)
        values = ini_values(conf_block)
        assert values[('api', 'auth_strategy')] == 'keystone'
        # The host whose agent step 7 starts.
        assert values[('compute', 'hypervisor_hostnames')] == \
            self.agent_host()
        assert self.sub(values[('cyborg', 'endpoint_override')]) == \
            self.cyborg_url + '/v2'
        env, argv = self.argv(find_command(text, 'nova-shim-compute'))
        path = argv[argv.index('--config-file') + 1]
        manage_env, manage = self.argv(find_command(text, 'nova-shim-manage',
                                                    'db', 'sync'))
        self.write(path, edit_ini(self.sub(conf_block), {
            **self.credentials(conf_block),
            ('compute', 'api_host'): '127.0.0.1',
            ('compute', 'api_port'): self.nova_port,
            # No hypervisor here: libvirt's in-memory test driver.
            ('libvirt', 'connection_uri'): 'test:///default',
            # This Keystone's catalog has no Placement.
            ('placement', 'endpoint_override'): self.placement_url}))
        self.group.run(manage, env=manage_env)
        self.nova_shim = self.group.start('nova-shim-compute', argv,
                                          env=env)
        self.nova_shim.wait_for_line(r'compute API at http://\S+/v2\.1',
                                     timeout=60)
        self.nova_shim.wait_for_http(
            'http://127.0.0.1:%d/healthcheck' % self.nova_port)
        self.boot_command = find_command(text, 'nova-shim', 'boot')

    def agent_host(self) -> str:
        [block] = ini_blocks(self.steps[7])
        return ini_values(block)[('DEFAULT', 'host')]

    def _agent(self, text: str) -> None:
        [block] = ini_blocks(text)
        self.sysfs_root = sysfs_tree.copy_tree(
            AGENT_TREE, os.path.join(self.tmp, 'host'))
        env, argv = self.argv(find_command(text, 'cyborg-lite-agent'))
        files = [argv[i + 1] for i, word in enumerate(argv)
                 if word == '--config-file']
        assert files[0] == self.conf and len(files) == 2, files
        self.write(files[1], edit_ini(self.sub(block), {
            # The fixture host's sysfs, not this machine's.
            ('agent', 'sysfs_root'): self.sysfs_root}))
        self.agent_log = self.sub(ini_values(block)[('DEFAULT',
                                                     'log_file')])
        user = self._agent_user(text, files)
        self.agent = self.group.start('agent', argv, env=env, user=user)
        self.agent.wait_for_line(r'Agent \S+ started', timeout=90)

    def _agent_user(self, text: str, files: list[str]) -> str | None:
        """Set up the agent's user as the guide says (its files readable
        by its group, its log its own, the sudoers line); the user, or
        None (then the agent runs as this test's user) where this
        machine cannot run it as another user with sudo."""
        [sudoers] = sudoers_blocks(text)
        line = self.sub(sudoers)
        self.agent_user = None
        if os.geteuid() != 0 or shutil.which('sudo') is None:
            self.agent_user_missing = 'not root, or no sudo'
            return None
        entry = pwd.getpwnam(AGENT_USER)
        try:
            # This installation's Python must be the user's to run.
            subprocess.run(processes.script('python') + [
                '-c', 'import cyborg_lite'], check=True, timeout=60,
                capture_output=True, user=entry.pw_uid,
                group=entry.pw_gid, extra_groups=[])
        except (OSError, subprocess.CalledProcessError) as exc:
            self.agent_user_missing = '%s cannot run %s: %s' % (
                AGENT_USER, processes.script('python')[0], exc)
            return None
        for path in files:
            os.chown(path, 0, entry.pw_gid)
            os.chmod(path, 0o640)
        with open(self.agent_log, 'a'):
            pass
        os.chown(self.agent_log, entry.pw_uid, entry.pw_gid)
        path = '/etc/sudoers.d/cyborg-lite-test-' + self.suffix
        with open(path + '.new', 'w') as f:
            f.write(line + '\n')
        os.chmod(path + '.new', 0o440)
        subprocess.run(['visudo', '-c', '-f', path + '.new'], check=True,
                       capture_output=True)
        os.rename(path + '.new', path)
        self.stack.callback(os.unlink, path)
        self.agent_user = AGENT_USER
        return AGENT_USER

    # -- stop --------------------------------------------------------

    def stop_with_sigterm(self, within: float) -> dict[str, float | None]:
        """SIGTERM to every process at once; ``{name: seconds until it
        exited}``, None for one that did not exit ``within`` seconds
        (then killed). gunicorn's workers count with their master."""
        procs = list(self.group.processes)
        children = {}
        for proc in procs:
            self.group._remember(proc.pid)
            children[proc.pid] = [
                ps for pid, ps in self.group.seen.items()
                if pid != proc.pid and _is_child(ps, proc.pid)]
        started = time.monotonic()
        for proc in reversed(procs):
            if proc.popen.poll() is None:
                proc.popen.send_signal(signal.SIGTERM)
        took = {}
        for proc in procs:
            try:
                proc.popen.wait(timeout=max(
                    0.0, within - (time.monotonic() - started)))
                _gone, alive = psutil.wait_procs(
                    children[proc.pid], timeout=max(
                    0.0, within - (time.monotonic() - started)))
                took[proc.name] = None if alive else round(
                    time.monotonic() - started, 2)
            except subprocess.TimeoutExpired:
                took[proc.name] = None
        self.group.stop_all(grace=1)
        return took

    def stop(self) -> list[str]:
        try:
            self.group.stop_all()
            return self.group.leftovers()
        finally:
            self.stack.close()


def _is_child(ps: psutil.Process, parent: int) -> bool:
    try:
        return ps.ppid() == parent
    except psutil.Error:
        return False


@pytest.fixture(scope='module')
def deployment(request):
    conftest.require_servers()
    pytest.importorskip('libvirt')
    keystone = identities.keystone_identities(
        request.getfixturevalue('keystone'))
    # Not under pytest's own temporary directory, which only its user
    # may enter: the agent's user reads its files here.
    tmp = tempfile.mkdtemp(prefix='cyborg-lite-production-')
    os.chmod(tmp, 0o711)
    try:
        with processes.running(ReadmeDeployment(
                tmp, os.environ[conftest.RABBIT_ENV], keystone)) as dep:
            yield dep
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the tests ---------------------------------------------------------


def cyborg(dep, method, path, headers=None, **kwargs):
    """A call to the cyborg-lite API, with the admin's token unless
    ``headers`` are given."""
    kwargs.setdefault('timeout', 30)
    return requests.request(method, dep.cyborg_url + '/v2' + path,
                            headers=headers or dep.headers('admin'),
                            **kwargs)


def placement(dep, path):
    resp = requests.get(dep.placement_url + path, timeout=30, headers=dict(
        dep.headers('admin'), **{'OpenStack-API-Version': 'placement 1.36'}))
    assert resp.status_code == 200, resp.text
    return resp.json()


def vgpu_deployable(dep):
    deps = cyborg(dep, 'GET', '/deployables').json()['deployables']
    found = [d for d in deps if '"VGPU"' in d['attributes_list']]
    assert len(found) == 1, deps
    return found[0]


def vgpu_usage(dep, rp_uuid):
    return placement(dep, '/resource_providers/%s/usages'
                     % rp_uuid)['usages'].get('VGPU', 0)


def ensure_profile(dep):
    listed = cyborg(dep, 'GET', '/device_profiles').json()['device_profiles']
    if DEVICE_PROFILE not in {p['name'] for p in listed}:
        resp = cyborg(dep, 'POST', '/device_profiles', json=[{
            'name': DEVICE_PROFILE, 'groups': [{'resources:VGPU': '1'}]}])
        assert resp.status_code == 201, resp.text


def test_healthchecks(deployment):
    for url in (deployment.cyborg_url, deployment.placement_url,
                'http://127.0.0.1:%d' % deployment.nova_port):
        resp = requests.get(url + '/healthcheck', timeout=10)
        assert resp.status_code == 200, (url, resp.text)


def test_agent_reported_the_host(deployment):
    dep = vgpu_deployable(deployment)
    assert dep['name'].startswith(deployment.agent_host() + '_')
    # Under the compute node that nova-shim-compute created.
    tree = placement(deployment, '/resource_providers?in_tree=%s'
                     % dep['rp_uuid'])['resource_providers']
    assert deployment.agent_host() in {rp['name'] for rp in tree}


def test_nova_boot_lifecycle(deployment):
    """``nova-shim --url ... boot --device-profile DP NAME`` as step 6
    gives it, then delete: the ARQ is Bound while the server is ACTIVE,
    and gone, with the Placement allocation, after."""
    ensure_profile(deployment)
    rp_uuid = vgpu_deployable(deployment)['rp_uuid']
    name = 'readme-' + uuid.uuid4().hex[:6]
    env, words = deployment.boot_command
    words = shlex.split(deployment.sub(shlex.join(words)))
    assert words[-3:] == ['--device-profile', 'DP', 'NAME'], words
    argv = processes.script(words[0]) + words[1:-2] + [DEVICE_PROFILE, name]
    # The member's openrc.
    openrc = dict(env, OS_AUTH_URL=deployment.keystone.url, OS_USERNAME=USER,
                  OS_PASSWORD=identities.PASSWORD % USER,
                  OS_PROJECT_NAME=identities.USERS[USER][0],
                  OS_USER_DOMAIN_NAME='Default',
                  OS_PROJECT_DOMAIN_NAME='Default')
    out = deployment.group.run(argv, timeout=120, env=openrc)
    fields = dict(re.findall(r'^(\S+)\s+(.*)$', out, flags=re.M))
    assert fields['status'] == 'ACTIVE', out
    server_id = fields['id']
    assert fields['OS-EXT-SRV-ATTR:hypervisor_hostname'] == \
        deployment.agent_host()
    assert re.search(r'^accelerator_request\s+\S+ Bound MDEV ', out,
                     flags=re.M), out

    resp = cyborg(deployment, 'GET', '/accelerator_requests',
                  params={'instance': server_id})
    assert resp.status_code == 200, resp.text
    [arq] = resp.json()['arqs']
    assert arq['state'] == 'Bound'
    assert arq['hostname'] == deployment.agent_host()
    assert arq['device_rp_uuid'] == rp_uuid
    allocations = placement(deployment, '/allocations/' + server_id)
    assert allocations['allocations'][rp_uuid]['resources'] == {'VGPU': 1}
    assert vgpu_usage(deployment, rp_uuid) == 1

    cli = words[:-4]
    deployment.group.run(processes.script(cli[0]) + cli[1:] + [
        'delete', name], timeout=60, env=openrc)
    deadline = time.monotonic() + 30
    while requests.get('%s/servers/%s' % (deployment.nova_url, server_id),
                       headers=deployment.headers(USER),
                       timeout=10).status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    resp = cyborg(deployment, 'GET', '/accelerator_requests/' + arq['uuid'])
    assert resp.status_code == 404, resp.text
    assert cyborg(deployment, 'GET', '/accelerator_requests', params={
        'instance': server_id}).json()['arqs'] == []
    assert placement(deployment,
                     '/allocations/' + server_id)['allocations'] == {}
    assert vgpu_usage(deployment, rp_uuid) == 0


def privsep_daemons(dep) -> list[psutil.Process]:
    """The agent's privsep daemons: ``privsep-helper`` processes started
    with this deployment's agent files."""
    found = []
    for proc in psutil.process_iter(['cmdline']):
        cmdline = proc.info['cmdline'] or []
        if any(word.endswith('privsep-helper') for word in cmdline[:3]) \
                and dep.conf in cmdline:
            found.append(proc)
    return found


def test_the_agent_runs_unprivileged(deployment):
    """After the boot: the agent is its own user's, the mdev was
    written as root by a privsep daemon without capabilities, which the
    agent started through the guide's sudoers line."""
    if deployment.agent_user is None:
        pytest.skip('the agent runs as its own user only where this '
                    'machine allows: %s' % deployment.agent_user_missing)
    entry = pwd.getpwnam(deployment.agent_user)
    agent = psutil.Process(deployment.agent.pid)
    assert agent.uids().real == entry.pw_uid
    assert agent.uids().effective == entry.pw_uid
    daemons = privsep_daemons(deployment)
    contexts = {proc.cmdline()[proc.cmdline().index('--privsep_context')
                               + 1] for proc in daemons}
    assert 'cyborg_lite.privsep.sysfs_admin' in contexts, daemons
    for proc in daemons:
        assert proc.uids().effective == 0
        with open('/proc/%d/status' % proc.pid) as f:
            status = dict(line.split(':', 1) for line in f)
        assert int(status['CapEff'], 16) == 0, status['CapEff']
        assert int(status['CapPrm'], 16) == 0, status['CapPrm']
    # The fixture T4's vGPU type: root's file, which the agent's user
    # cannot write, holds the uuid of the guest's mdev.
    create = [os.path.join(d, 'create')
              for d, _dirs, names in os.walk(deployment.sysfs_root)
              if d.endswith('/nvidia-223') and 'create' in names]
    assert create
    written = [path for path in create if open(path).read().strip()]
    assert written, create
    for path in written:
        info = os.stat(path)
        assert info.st_uid == 0 and not info.st_mode & 0o022, oct(
            info.st_mode)


def test_arq_lifecycle_as_nova_drives_it(deployment):
    """Create, bind with a service identity, poll until resolved, delete
    by instance."""
    ensure_profile(deployment)
    rp_uuid = vgpu_deployable(deployment)['rp_uuid']
    instance = str(uuid.uuid4())
    user = deployment.headers(USER)
    # Nova acting for the user: the user's token and Nova's service token.
    service = deployment.headers(USER, service=True)
    resp = cyborg(deployment, 'POST', '/accelerator_requests', headers=user,
                  json={'device_profile_name': DEVICE_PROFILE})
    assert resp.status_code == 201, resp.text
    [arq] = resp.json()['arqs']
    assert arq['state'] == 'Initial'
    patch = {arq['uuid']: [
        {'op': 'add', 'path': '/hostname', 'value': deployment.agent_host()},
        {'op': 'add', 'path': '/device_rp_uuid', 'value': rp_uuid},
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}]}
    # Without the service role a bind is refused.
    assert cyborg(deployment, 'PATCH', '/accelerator_requests',
                  headers=user, json=patch).status_code == 403
    resp = cyborg(deployment, 'PATCH', '/accelerator_requests',
                  headers=service, json=patch)
    assert resp.status_code == 202, resp.text
    deadline = time.monotonic() + 30
    while True:
        resp = cyborg(deployment, 'GET', '/accelerator_requests',
                      headers=service, params={'instance': instance,
                                               'bind_state': 'resolved'})
        if resp.status_code != 423:
            break
        assert time.monotonic() < deadline, resp.text
        time.sleep(0.05)
    assert resp.status_code == 200, resp.text
    [bound] = resp.json()['arqs']
    assert bound['state'] == 'Bound'
    assert bound['attach_handle_type'] == 'MDEV'
    resp = cyborg(deployment, 'DELETE', '/accelerator_requests',
                  headers=service, params={'instance': instance})
    assert resp.status_code == 204, resp.text
    assert cyborg(deployment, 'GET', '/accelerator_requests/' + arq['uuid'],
                  headers=service).status_code == 404


def test_every_process_stops_on_sigterm(deployment):
    """The guide: "Stop every service with SIGTERM; each finishes what it is
    doing and exits"."""
    took = deployment.stop_with_sigterm(STOP_WITHIN)
    # The one log file that the guide's cyborg-lite.conf names, shared by
    # the API workers, the conductors and the agent.
    with open(deployment.log_file) as f:
        logged = f.read()
    assert len(took) == 6, took
    slow = {name: t for name, t in took.items() if t is None}
    assert not slow, 'not gone within %ss: %s (%s); the log ends:\n%s' % (
        STOP_WITHIN, slow, took, '\n'.join(logged.splitlines()[-40:]))
    assert ' ERROR ' not in logged and 'Traceback' not in logged, logged
    with open(deployment.agent_log) as f:
        logged = f.read()
    assert ' ERROR ' not in logged and 'Traceback' not in logged, logged
    # The agent's privsep daemons end with it.
    deadline = time.monotonic() + 5
    while privsep_daemons(deployment):
        assert time.monotonic() < deadline, privsep_daemons(deployment)
        time.sleep(0.1)
