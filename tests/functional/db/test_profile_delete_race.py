"""A device profile delete racing an ARQ create of the profile.

The delete counts the profile's ARQs, then deletes the profile; an ARQ
created in between makes the foreign key refuse the delete. The delete
then counts again and answers DeviceProfileInUse (a 409), never a
database error (a 500), and the profile and the ARQ stay. Run where
writers do not queue on one lock (PostgreSQL, MySQL).
"""

import pytest
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite import exception
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import migration

GROUPS = [{'resources:FPGA': '1'}]


def test_an_arq_created_during_a_profile_delete_keeps_the_profile(db_url):
    if db_url.startswith('sqlite'):
        pytest.skip('SQLite writers queue on one lock: nothing runs '
                    'between a writer\'s statements')
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db, other = engine.Database(conf), engine.Database(conf)
    migration.upgrade(db)
    db_api.device_profile_create(db, 'raced', GROUPS)
    created = []

    def create_before_the_delete(conn, cursor, statement, *args):
        # The instant between the count and the delete: another
        # conductor creates an ARQ of the profile, and commits.
        if statement.startswith('DELETE FROM device_profiles') and \
                not created:
            created.extend(db_api.arq_create(other, 'raced', None, 'p1'))

    sa.event.listen(db.engine, 'before_cursor_execute',
                    create_before_the_delete)
    try:
        with pytest.raises(exception.DeviceProfileInUse):
            db_api.device_profile_delete(db, names=['raced'])
    finally:
        sa.event.remove(db.engine, 'before_cursor_execute',
                        create_before_the_delete)
    assert len(created) == 1
    assert db_api.device_profile_get(db, name='raced')['name'] == 'raced'
    assert db_api.arq_get(db, created[0]['uuid'])['state'] == 'Initial'
    db.dispose()
    other.dispose()
