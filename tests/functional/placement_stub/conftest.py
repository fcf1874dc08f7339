"""An app per test, on SQLite and (with CYBORG_LITE_TEST_PG_URL and
CYBORG_LITE_TEST_MYSQL_URL) PostgreSQL and MySQL. On PostgreSQL each
test process has a database of its own, emptied before each test, so
that the processes of a parallel run do not drop each other's tables."""

import os
import uuid

import pytest
import sqlalchemy as sa
import webtest

from placement_stub import conf as conf_lib
from placement_stub.db import models
from placement_stub import deploy
from tests.fixtures import databases

PG_URL = os.environ.get('CYBORG_LITE_TEST_PG_URL')


@pytest.fixture(scope='session')
def pg_url():
    if not PG_URL:
        pytest.skip('CYBORG_LITE_TEST_PG_URL is not set')
    with databases.pg_database() as url:
        yield url


def _reset_pg(url):
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        models.Base.metadata.drop_all(conn)
        conn.execute(sa.text('DROP TABLE IF EXISTS alembic_version'))
    engine.dispose()


@pytest.fixture(params=['sqlite', 'postgresql', 'mysql'])
def db_url(request, tmp_path):
    if request.param == 'postgresql':
        url = request.getfixturevalue('pg_url')
        _reset_pg(url)
        yield url
        return
    if request.param == 'mysql':
        with databases.mysql_database() as url:
            yield url
        return
    if request.param == 'sqlite':
        yield 'sqlite:///%s' % (tmp_path / 'placement.sqlite')


class Client:
    """WebTest with a microversion and JSON helpers."""

    def __init__(self, app):
        self.app = webtest.TestApp(app)

    def call(self, method, url, body=None, version='latest', status=None,
             headers=None):
        hdrs = {'OpenStack-API-Version': 'placement %s' % version}
        hdrs.update(headers or {})
        kwargs = {'headers': hdrs, 'status': status or '*',
                  'expect_errors': True}
        if body is not None:
            return getattr(self.app, method.lower() + '_json')(
                url, body, **kwargs)
        return getattr(self.app, method.lower())(url, **kwargs)

    def provider(self, name, parent=None, inventories=None, traits=None):
        body = {'name': name, 'uuid': str(uuid.uuid4())}
        if parent:
            body['parent_provider_uuid'] = parent
        rp = self.call('POST', '/resource_providers', body, status=200).json
        gen = rp['generation']
        if inventories:
            gen = self.call('PUT', '/resource_providers/%s/inventories'
                            % rp['uuid'], {
                                'resource_provider_generation': gen,
                                'inventories': inventories},
                            status=200).json['resource_provider_generation']
        if traits:
            for trait in traits:
                if trait.startswith('CUSTOM_'):
                    self.call('PUT', '/traits/' + trait)
            self.call('PUT', '/resource_providers/%s/traits' % rp['uuid'],
                      {'traits': traits, 'resource_provider_generation': gen},
                      status=200)
        return rp['uuid']


@pytest.fixture
def client(db_url):
    conf = conf_lib.build_conf(overrides={
        ('placement_database', 'connection'): db_url,
        ('placement_database', 'sqlite_synchronous'): False,
        ('api', 'auth_strategy'): 'noauth2',
        ('placement', 'sync_on_startup'): True})
    return Client(deploy.deploy(conf))


def _asked_version(resp):
    """The microversion the request asked for, as a tuple (None: none)."""
    header = resp.request.headers.get('OpenStack-API-Version', '')
    value = header.replace('placement', '').strip()
    if value == 'latest':
        return (1, 99)
    try:
        return tuple(int(part) for part in value.split('.'))
    except ValueError:
        return None


def assert_error(resp, status, code='placement.undefined_code'):
    assert resp.status_int == status, resp.text
    error = resp.json['errors'][0]
    assert error['status'] == status
    # The code came with 1.23, as in Placement; a request refused before
    # its version was read (401, or 406 for the version itself) has none.
    version = _asked_version(resp)
    if (version is not None and version >= (1, 23) and
            status not in (401, 406)):
        assert error['code'] == code
    else:
        assert 'code' not in error, error
    assert error['request_id'].startswith('req-')
    assert error['title']
    return error
