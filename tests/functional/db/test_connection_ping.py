"""A pooled server connection that the server dropped while it sat in
the pool is replaced before anyone uses it (oslo.db's pre-ping)."""

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.db import engine
from tests.fixtures import databases


def _database(url):
    return engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): url}))


def _backend_pid(db):
    with db.read_connection() as conn:
        return conn.scalar(sa.text('SELECT pg_backend_pid()'))


def test_a_pooled_connection_the_server_dropped_is_replaced():
    with databases.pg_database() as url:
        db = _database(url)
        first = _backend_pid(db)
        killer = sa.create_engine(url)
        with killer.connect() as conn:
            conn.execute(sa.text('SELECT pg_terminate_backend(:pid)'),
                         {'pid': first})
        killer.dispose()
        second = _backend_pid(db)
        assert second != first
        db.dispose()
