"""A SQLite file keeps its write-ahead log between transactions.

oslo.db gives SQLite no connection pool, so each transaction opens and
closes the file; the Database holds one connection open so that those
closes do not checkpoint and delete the log every time. The log is still
checkpointed when the Database is disposed of, and nothing is lost.
"""

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


def test_memory_databases_hold_nothing_open(tmp_path):
    db = engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): 'sqlite://'}))
    assert db._sqlite_anchor is None
    db.dispose()
