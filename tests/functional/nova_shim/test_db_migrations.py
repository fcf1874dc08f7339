"""nova_shim's schema comes from its migrations: they build exactly the
tables of the models on SQLite, PostgreSQL and MySQL; a database that an
older release made without them is adopted with its rows;
``nova-shim-manage db sync`` drives them, and the compute service
refuses a schema that is not the newest unless told to migrate."""

import json

from alembic import autogenerate
from alembic import migration as alembic_migration
import pytest
import sqlalchemy as sa

from nova_shim.cmd import manage
from nova_shim import conf as shim_conf
from nova_shim.db import api as db_api
from nova_shim.db import migration
from nova_shim.db import models
from nova_shim.service import ComputeService
from nova_shim.service import SchemaNotCurrent
from tests.fixtures import databases


def test_models_and_migrations_agree(db_url):
    database = db_api.Database(db_url)
    try:
        assert migration.version(database.engine) is None
        migration.upgrade(database.engine)
        migration.upgrade(database.engine)  # again: nothing to do
        assert migration.version(database.engine) == migration.head()
        with database.engine.connect() as conn:
            context = alembic_migration.MigrationContext.configure(
                conn, opts={'compare_type': True,
                            'compare_server_default':
                                databases.compare_server_default})
            diff = autogenerate.compare_metadata(context, models.METADATA)
    finally:
        database.dispose()
    assert diff == []


OLD_COLUMNS = [c for c in models.INSTANCES.columns
               if c.name not in ('retry', 'reservation_id', 'image_ref')]


def test_a_database_from_before_the_migrations_is_adopted(tmp_path):
    """What an older compute service made at start-up: the tables
    without the columns added since, and no version."""
    url = 'sqlite:///%s' % (tmp_path / 'old.sqlite')
    old = sa.MetaData()
    table = sa.Table('instances', old,
                     *[sa.Column(c.name, c.type, primary_key=c.primary_key,
                                 nullable=c.nullable) for c in OLD_COLUMNS])
    sa.Table('services', old, *[sa.Column(c.name, c.type,
                                          primary_key=c.primary_key)
                                for c in models.SERVICES.columns])
    engine = sa.create_engine(url)
    old.create_all(engine)
    now = sa.func.current_timestamp()
    with engine.begin() as conn:
        conn.execute(table.insert().values(
            uuid='u-1', name='kept', flavor=json.dumps({'vcpus': 1}),
            vm_state='active', power_state=1, arq_uuids='[]',
            allocation_claimed=False, created_at=now, updated_at=now))
    engine.dispose()

    database = db_api.Database(url)
    try:
        migration.upgrade(database.engine)
        assert migration.version(database.engine) == migration.head()
        instance = database.get('u-1')
        assert (instance.name, instance.retry, instance.reservation_id) == (
            'kept', None, None)
        database.update('u-1', retry={'num_attempts': 1,
                                      'hosts': [['h', 'h']]},
                        reservation_id='r-1')
        assert database.get('u-1').reservation_id == 'r-1'
    finally:
        database.dispose()


def test_db_sync_and_version(tmp_path, capsys):
    conf = tmp_path / 'nova-shim.conf'
    conf.write_text('[DEFAULT]\nstate_path = %s\n' % tmp_path)
    args = ['--config-file', str(conf), 'db']
    assert manage.main(args + ['version']) == 0
    assert capsys.readouterr().out.strip() == 'None'
    assert manage.main(args + ['sync']) == 0
    assert migration.head() in capsys.readouterr().out
    assert manage.main(args + ['version']) == 0
    assert capsys.readouterr().out.strip() == migration.head()


def test_the_compute_service_refuses_a_schema_not_synced(tmp_path):
    conf = shim_conf.build_conf(overrides={
        (None, 'state_path'): str(tmp_path), ('compute', 'api_port'): 0,
        ('api', 'auth_strategy'): 'noauth2'})
    with pytest.raises(SchemaNotCurrent, match='db sync'):
        ComputeService(conf).start()
