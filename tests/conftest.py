"""Fixtures shared by every test package."""

import logging
import warnings

import pytest

from tests.fixtures import databases

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
