"""Connections to a SQLite file are pooled, and the file keeps its
write-ahead log between transactions.

oslo.db gives SQLite files no connection pool, so each transaction would
open and close the file, and each close, being the last, would
checkpoint and delete the log. The Database pools them instead. The log
is still checkpointed when the Database is disposed of, and nothing is
lost.
"""

import concurrent.futures
import os

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import migration


def _database(path):
    db = engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): 'sqlite:///%s' % path}))
    migration.upgrade(db)
    return db


def test_the_log_survives_each_transaction(tmp_path):
    path = tmp_path / 'cyborg.sqlite'
    db = _database(path)
    for n in range(5):
        db_api.device_profile_create(db, 'dp%d' % n,
                                     [{'resources:FPGA': '1'}])
        with db.read_connection() as conn:
            conn.execute(sa.text('SELECT 1'))
        assert os.path.exists(str(path) + '-wal')
    assert [p['name'] for p in db_api.device_profile_list(db)] == [
        'dp%d' % n for n in range(5)]
    db.dispose()
    # The last close checkpoints the log into the file and removes it.
    assert not os.path.exists(str(path) + '-wal')
    again = _database(path)
    assert len(db_api.device_profile_list(again)) == 5
    again.dispose()


def test_a_new_file_is_in_wal_mode(tmp_path):
    db = _database(tmp_path / 'new.sqlite')
    with db.read_connection() as conn:
        assert conn.exec_driver_sql('PRAGMA journal_mode').scalar() == 'wal'
    db.dispose()


def test_transactions_reuse_connections_across_threads(tmp_path):
    db = _database(tmp_path / 'pooled.sqlite')
    connects = []
    sa.event.listen(db.engine, 'connect',
                    lambda dbapi_con, record: connects.append(dbapi_con))

    def work(n):
        db_api.device_profile_create(db, 'dp%d' % n,
                                     [{'resources:FPGA': '1'}])
        with db.read_connection() as conn:
            return conn.exec_driver_sql(
                'PRAGMA foreign_keys').scalar()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        foreign_keys = list(pool.map(work, range(40)))
    # Every connection, new or reused, has the connect-time PRAGMAs.
    assert foreign_keys == [1] * 40
    assert len(connects) <= 4
    assert len(db_api.device_profile_list(db)) == 40
    db.dispose()


def test_memory_databases_keep_one_static_connection():
    db = engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): 'sqlite://'}))
    assert isinstance(db.engine.pool, sa.pool.StaticPool)
    db.dispose()
