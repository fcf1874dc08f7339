"""Fixtures shared by every test package."""

import logging
import warnings

import pytest

from tests.fixtures import databases
from tests.functional.auth import keystone_server

warnings.filterwarnings('ignore', module='oslo_service')
for _name in ('kombu', 'oslo.messaging._drivers.impl_rabbit'):
    logging.getLogger(_name).setLevel(logging.ERROR)

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
