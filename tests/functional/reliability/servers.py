"""A RabbitMQ node and a PostgreSQL server of our own, to break.

The reliability tests stop and start the broker and the database, so
they never use the shared servers of ``tools/test-setup.sh``: they run
that script with their own directory and ports
(``CYBORG_LITE_TEST_DIR``, ``CYBORG_LITE_PG_PORT``,
``CYBORG_LITE_RABBIT_*``), and then stop and restart each server by the
PID it recorded. Nothing else is touched.
"""

from __future__ import annotations

import glob
import os
import signal
import socket
import subprocess
import time

from tests.fixtures import processes
from tests.fixtures import rabbit_cluster

ROOT = rabbit_cluster.ROOT
SETUP = rabbit_cluster.SETUP


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def _read_pid(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return None


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(('127.0.0.1', port)) == 0


class Servers:
    """Our own PostgreSQL and RabbitMQ under ``directory``."""

    def __init__(self, directory: str) -> None:
        self.dir = str(directory)
        self.pg_port = processes.free_port(15000, 19000)
        self.rabbit_port = processes.free_port(15000, 19000)
        self.dist_port = processes.free_port(15000, 19000)
        self.epmd_port = processes.free_port(15000, 19000)
        self.env = dict(os.environ,
                        CYBORG_LITE_TEST_DIR=self.dir,
                        CYBORG_LITE_TEST_MYSQL='0',
                        CYBORG_LITE_PG_PORT=str(self.pg_port),
                        CYBORG_LITE_RABBIT_PORT=str(self.rabbit_port),
                        CYBORG_LITE_RABBIT_DIST_PORT=str(self.dist_port),
                        CYBORG_LITE_RABBIT_EPMD_PORT=str(self.epmd_port))
        self.pg_url = ('postgresql+psycopg2://postgres@127.0.0.1:%d/postgres'
                       % self.pg_port)
        self.rabbit_url = 'rabbit://guest:guest@127.0.0.1:%d/' % (
            self.rabbit_port)
        self._pg_options = None

    def _setup(self, action: str) -> str:
        result = subprocess.run(['bash', SETUP, action], env=self.env,
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, (action, result.stdout,
                                        result.stderr)
        return result.stdout

    def start(self) -> 'Servers':
        self._setup('start')
        return self

    def stop(self) -> None:
        self._setup('stop')

    # -- RabbitMQ -------------------------------------------------------

    @property
    def _rmq_dir(self) -> str:
        return os.path.join(self.dir, 'rabbitmq')

    def kill_rabbit(self) -> None:
        """Kill the broker (SIGKILL: it goes away as in a crash) and its
        epmd, which would otherwise hold the port for the restart."""
        for name in ('rabbitmq.pid', 'launcher.pid', 'epmd.pid'):
            pid = _read_pid(os.path.join(self._rmq_dir, name))
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
                _wait_gone(pid)
        deadline = time.monotonic() + 10
        while port_open(self.rabbit_port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not port_open(self.rabbit_port)

    def start_rabbit(self) -> None:
        """Start a fresh node on the same port (the test-setup script
        starts only what is down)."""
        self._setup('start')
        assert port_open(self.rabbit_port)

    # -- PostgreSQL -----------------------------------------------------

    @property
    def _pg_data(self) -> str:
        return os.path.join(self.dir, 'pg', 'data')

    def stop_pg(self) -> None:
        """Fast shutdown (SIGINT): every session is cut at once, and
        what was committed is kept for ``start_pg``. (An immediate
        shutdown would lose the last commits, because the test server
        runs with ``synchronous_commit=off``.)"""
        pid = _read_pid(os.path.join(self._pg_data, 'postmaster.pid'))
        assert _alive(pid)
        os.kill(pid, signal.SIGINT)
        _wait_gone(pid)
        assert not port_open(self.pg_port)

    def restart_pg(self) -> None:
        """``pg_ctl restart`` as an operator (or ``systemctl restart``)
        runs it: a fast shutdown (every session cut, what was committed
        kept), then a start with the same options."""
        pg_bin = sorted(glob.glob('/usr/lib/postgresql/*/bin'))[-1]
        result = subprocess.run(
            ['runuser', '-u', 'postgres', '--',
             os.path.join(pg_bin, 'pg_ctl'), '-D', self._pg_data, '-w',
             '-l', os.path.join(self.dir, 'pg', 'log'), '-m', 'fast',
             'restart'], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (result.stdout, result.stderr)

    def start_pg(self) -> None:
        """Start the same cluster again (its data kept)."""
        pg_bin = sorted(glob.glob('/usr/lib/postgresql/*/bin'))[-1]
        options = ('-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off '
                   '-c synchronous_commit=off -c full_page_writes=off '
                   '-c max_connections=300' % (
                       self.pg_port, os.path.join(self.dir, 'pg', 'socket')))
        result = subprocess.run(
            ['runuser', '-u', 'postgres', '--',
             os.path.join(pg_bin, 'pg_ctl'), '-D', self._pg_data, '-w',
             '-l', os.path.join(self.dir, 'pg', 'log'), '-o', options,
             'start'], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (result.stdout, result.stderr)
