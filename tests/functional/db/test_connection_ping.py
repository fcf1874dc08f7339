"""Pooled server connections are pinged only after sitting idle, and an
idle connection the server dropped is replaced before anyone uses it."""

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.db import engine
from tests.fixtures import databases


def _database(url):
    return engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): url}))


def _count_pings(db):
    pings = []
    ping = db.engine.dialect.do_ping

    def counted(dbapi_con):
        pings.append(dbapi_con)
        return ping(dbapi_con)

    db.engine.dialect.do_ping = counted
    return pings


def _backend_pid(db):
    with db.read_connection() as conn:
        return conn.scalar(sa.text('SELECT pg_backend_pid()'))


def test_busy_connections_are_not_pinged():
    with databases.pg_database() as url:
        db = _database(url)
        pings = _count_pings(db)
        for _ in range(20):
            _backend_pid(db)
        assert pings == []
        db.dispose()


def test_an_idle_connection_the_server_dropped_is_replaced(monkeypatch):
    with databases.pg_database() as url:
        db = _database(url)
        first = _backend_pid(db)
        killer = sa.create_engine(url)
        with killer.connect() as conn:
            conn.execute(sa.text('SELECT pg_terminate_backend(:pid)'),
                         {'pid': first})
        killer.dispose()
        monkeypatch.setattr(engine, 'IDLE_PING_AFTER', 0)
        pings = _count_pings(db)
        second = _backend_pid(db)
        assert second != first
        assert len(pings) >= 1
        db.dispose()
