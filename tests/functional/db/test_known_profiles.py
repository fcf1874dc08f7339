"""An ARQ create of a profile the process has read before is one
INSERT ... SELECT that finds the profile by name and groups, and stays
right when the profile is deleted or created again with other groups."""

import pytest

from cyborg_lite import exception
from cyborg_lite.db import api as db_api
from tests.fixtures import databases
from tests.functional.db import test_autocommit

KINDS = ['sqlite', 'postgresql', 'mysql']
ONE = [{'resources:FPGA': '1'}]
TWO = [{'resources:FPGA': '1'}, {'resources:GPU': '1'}]


@pytest.fixture(params=KINDS)
def db(request, tmp_path):
    with databases.database_url(request.param, tmp_path) as url:
        db = test_autocommit._database(url)
        yield db
        db.dispose()


def _create(db, name='dp', project='p1'):
    """The ARQs created and the statements sent, by their first word."""
    sent = test_autocommit._record_sql(db)
    arqs = db_api.arq_create(db, name, None, project)
    return arqs, [s for s in sent if s != 'BEGIN']


def test_second_create_is_one_insert(db):
    db_api.device_profile_create(db, 'dp', ONE)
    first, sent = _create(db)
    assert sent == ['SELECT', 'INSERT']
    second, sent = _create(db)
    assert sent == ['INSERT']
    listed = {a['uuid']: a for a in db_api.arq_list(db, project_id='p1')}
    for arq in first + second:
        stored = listed[arq['uuid']]
        # MySQL's DATETIME keeps whole seconds.
        assert stored['created_at'][:19] == arq['created_at'][:19]
        assert dict(stored, created_at=None) == dict(arq, created_at=None)
        assert (arq['device_profile_name'], arq['device_profile_group_id'],
                arq['state'], arq['project_id']) == ('dp', 0, 'Initial', 'p1')


def test_profile_deleted_since_is_not_found(db):
    db_api.device_profile_create(db, 'dp', ONE)
    arqs, _ = _create(db)
    db_api.arq_delete(db, lambda held: None, uuids=[arqs[0]['uuid']])
    db_api.device_profile_delete(db, names=['dp'])
    with pytest.raises(exception.DeviceProfileNotFound):
        _create(db)
    assert db_api.arq_list(db) == []
    assert 'dp' not in db.known_profiles


def test_profile_created_again_with_other_groups_is_read_again(db):
    db_api.device_profile_create(db, 'dp', ONE)
    arqs, _ = _create(db)
    db_api.arq_delete(db, lambda held: None, uuids=[arqs[0]['uuid']])
    db_api.device_profile_delete(db, names=['dp'])
    db_api.device_profile_create(db, 'dp', TWO)
    arqs, sent = _create(db)
    assert sent == ['INSERT', 'SELECT', 'INSERT']
    assert sorted(a['device_profile_group_id'] for a in arqs) == [0, 1]
    assert len(db_api.arq_list(db)) == 2
    # The profile as read now is the one remembered.
    arqs, sent = _create(db)
    assert sent == ['SELECT', 'INSERT'] and len(arqs) == 2


def test_profiles_of_several_arqs_are_read_every_time(db):
    db_api.device_profile_create(db, 'dp', TWO)
    for _ in range(2):
        arqs, sent = _create(db)
        assert sent == ['SELECT', 'INSERT']
        assert len(arqs) == 2
