"""Fixtures shared by every test package."""

import logging
import warnings

import pytest

from cyborg_lite import privsep
from tests.fixtures import databases
from tests.functional.auth import keystone_server

warnings.filterwarnings('ignore', module='oslo_service')
# Agents that run in the tests' own process write into fixture trees
# that the tests own: their privileged functions run in process, as
# Nova's tests run its privsep functions. Agents started as processes
# use daemons, and tests/unit/privsep runs the functions through them.
privsep.run_in_process()
for _name in ('kombu', 'oslo.messaging._drivers.impl_rabbit'):
    logging.getLogger(_name).setLevel(logging.ERROR)


@pytest.fixture(autouse=True)
def _root_logger_left_as_found():
    """A command run in-process (oslo.log's setup, logging.basicConfig)
    gives the root logger handlers that write to this test's captured
    stderr. Left in place, they make every later log record of any
    thread print '--- Logging error ---' once the capture has closed, so
    each test leaves the root logger's own handlers and level as it found
    them (pytest's capturing handlers are pytest's to add and remove)."""
    root = logging.getLogger()
    level = root.level
    before = [h for h in root.handlers if not _is_pytests(h)]
    yield
    for handler in root.handlers[:]:
        if not _is_pytests(handler) and handler not in before:
            root.removeHandler(handler)
            handler.close()
    for handler in before:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


def _is_pytests(handler):
    return type(handler).__module__.startswith('_pytest')


# PostgreSQL through psycopg 3 (the driver tools/test-setup.sh names, and
# the one the docs recommend) and through psycopg2, which operators'
# postgresql:// URLs still pick.
DB_KINDS = ['sqlite', 'postgresql', 'postgresql-psycopg2', 'mysql']


@pytest.fixture(params=DB_KINDS)
def db_url(request, tmp_path):
    """Runs a test on SQLite, PostgreSQL (both drivers) and
    MariaDB/MySQL."""
    with databases.database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope='session')
def keystone(tmp_path_factory):
    """A real Keystone on loopback, one per test session (skipped when
    ``.venv-keystone`` is missing)."""
    python = keystone_server.keystone_python()
    if python is None:
        pytest.skip('Keystone is not installed (tools/run-tests.sh puts it '
                    'in .venv-keystone)')
    server = keystone_server.Keystone(python, tmp_path_factory.mktemp('ks'))
    try:
        server.start()
        yield server
    finally:
        server.stop()
