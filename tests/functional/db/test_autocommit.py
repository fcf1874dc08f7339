"""One-statement reads and the ARQ create run without a transaction of
their own on server databases, and stay correct.

A read sends no BEGIN and no ROLLBACK; an ARQ create is one INSERT whose
foreign key still refuses a profile deleted after it was read, which the
caller sees as "no such profile", not as a server error.
"""

import pytest
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import exception
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from tests.fixtures import databases

SERVERS = ['postgresql', 'mysql']


def _database(url):
    db = engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): url}))
    migration.upgrade(db)
    return db


def _record_sql(db):
    sent = []

    def record(conn, cursor, statement, *args):
        sent.append(statement.split(None, 1)[0].upper())

    sa.event.listen(db.engine, 'before_cursor_execute', record)
    return sent


def _record_transactions(db):
    """BEGIN, COMMIT and ROLLBACK as the DB-API connection receives
    them (autocommit connections receive none)."""
    seen = []
    sa.event.listen(db.engine, 'commit', lambda conn: seen.append(
        ('COMMIT', conn.connection.dbapi_connection.autocommit)))
    sa.event.listen(db.engine, 'rollback', lambda conn: seen.append(
        ('ROLLBACK', conn.connection.dbapi_connection.autocommit)))
    return seen


@pytest.mark.parametrize('kind', SERVERS)
def test_reads_and_creates_run_in_autocommit(kind, tmp_path):
    with databases.database_url(kind, tmp_path) as url:
        db = _database(url)
        db_api.device_profile_create(db, 'dp', [{'resources:FPGA': '1'},
                                                {'resources:FPGA': '1'}])
        seen = _record_transactions(db)
        created = db_api.arq_create(db, 'dp', None, 'p1')
        listed = db_api.arq_list(db, project_id='p1')
        assert sorted(a['uuid'] for a in created) == \
            sorted(a['uuid'] for a in listed)
        assert [a['state'] for a in listed] == ['Initial', 'Initial']
        # Every transaction end SQLAlchemy saw was on an autocommit
        # DB-API connection, so none of them reached the server.
        assert seen and all(autocommit for _, autocommit in seen)
        db.dispose()


@pytest.mark.parametrize('kind', SERVERS + ['sqlite'])
def test_a_profile_deleted_before_the_insert_is_not_found(kind, tmp_path):
    with databases.database_url(kind, tmp_path) as url:
        db = _database(url)
        db_api.device_profile_create(db, 'dp', [{'resources:FPGA': '1'}])
        other = _database(url)
        sent = _record_sql(db)
        deleted = []

        def delete_profile_first(conn, cursor, statement, *args):
            if statement.lstrip().upper().startswith('INSERT') and \
                    not deleted:
                deleted.append(True)
                db_api.device_profile_delete(other, names=['dp'])

        if kind == 'sqlite':
            # SQLite's create is a write transaction: the other writer
            # cannot get in between, so the race cannot happen there.
            db_api.arq_create(db, 'dp', None, 'p1')
            assert db_api.arq_list(db, project_id='p1')
        else:
            sa.event.listen(db.engine, 'before_cursor_execute',
                            delete_profile_first)
            with pytest.raises(exception.DeviceProfileNotFound):
                db_api.arq_create(db, 'dp', None, 'p1')
            assert deleted and 'INSERT' in sent
            assert db_api.arq_list(db) == []
        db.dispose()
        other.dispose()
