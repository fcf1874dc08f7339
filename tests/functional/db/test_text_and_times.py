"""Text and timestamps read back as written, on every database.

On MySQL a table otherwise takes the server's character set and a
case-insensitive collation, a TEXT holds 64 KiB and a DATETIME drops
the microseconds; migration 0003 makes MySQL keep what PostgreSQL and
SQLite keep.
"""

import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite import exception
from cyborg_lite.db import api as db_api
from cyborg_lite.db import engine
from cyborg_lite.db import migration


@pytest.fixture
def db(db_url):
    conf = cl_conf.build_conf(overrides={('database', 'connection'): db_url})
    db = engine.Database(conf)
    migration.upgrade(db)
    yield db
    db.dispose()


def test_names_that_differ_in_case_are_two_profiles(db):
    db_api.device_profile_create(db, 'gpu', [{'resources:PGPU': '1'}])
    db_api.device_profile_create(db, 'GPU', [{'resources:VGPU': '1'}])
    assert db_api.device_profile_get(db, name='gpu')['groups'] == [
        {'resources:PGPU': '1'}]
    assert [a['device_profile_name']
            for a in db_api.arq_create(db, 'gpu', None, 'p1')] == ['gpu']
    with pytest.raises(exception.DeviceProfileNotFound):
        db_api.device_profile_get(db, name='Gpu')


def test_any_character_and_large_profiles_are_kept(db):
    description = 'GPU 配置 for 🚀 renders'
    groups = [{'resources:FPGA': '1',
               **{'accel:k%02d' % n: 'v' * 255 for n in range(63)}}
              for _ in range(8)]
    dp = db_api.device_profile_create(db, 'big', groups,
                                      description=description)
    stored = db_api.device_profile_get(db, uuid=dp['uuid'])
    assert stored['description'] == description
    assert stored['groups'] == groups


def test_timestamps_keep_their_microseconds(db):
    db_api.device_profile_create(db, 'timed', [{'resources:FPGA': '1'}])
    created, = db_api.arq_create(db, 'timed', None, 'p1')
    assert db_api.arq_get(db, created['uuid'])['created_at'] == \
        created['created_at']


def test_a_mysql_url_in_3_byte_utf8_still_speaks_utf8mb4(db_url):
    """devstack writes ``?charset=utf8`` (MySQL's 3-byte utf8): the
    connection speaks utf8mb4 all the same, so a 4-byte character is
    stored and a name compares with the binary collation."""
    if 'charset=utf8mb4' not in db_url:
        pytest.skip('MySQL only')
    conf = cl_conf.build_conf(overrides={('database', 'connection'):
                                         db_url.replace('charset=utf8mb4',
                                                        'charset=utf8')})
    db = engine.Database(conf)
    migration.upgrade(db)
    db_api.device_profile_create(db, 'gpu-🚀', [{'resources:PGPU': '1'}])
    assert db_api.device_profile_get(db, name='gpu-🚀')['name'] == 'gpu-🚀'
    db.dispose()
