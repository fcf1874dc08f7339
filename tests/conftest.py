"""Fixtures shared by every test package."""

import logging
import warnings

import pytest

from tests.fixtures import databases

warnings.filterwarnings('ignore', module='oslo_service')
for _name in ('kombu', 'oslo.messaging._drivers.impl_rabbit'):
    logging.getLogger(_name).setLevel(logging.ERROR)

DB_KINDS = ['sqlite', 'postgresql']


@pytest.fixture(params=DB_KINDS)
def db_url(request, tmp_path):
    """Runs a test once on SQLite and once on PostgreSQL."""
    with databases.database_url(request.param, tmp_path) as url:
        yield url
