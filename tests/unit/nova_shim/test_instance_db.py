"""nova_shim's instance database: a database made by an older release
gains the columns added since, and keeps its rows."""

import json

import sqlalchemy as sa

from nova_shim.compute import db

OLD_COLUMNS = [c for c in db.INSTANCES.columns
               if c.name not in ('retry', 'reservation_id')]


def test_create_schema_adds_missing_nullable_columns(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'old.sqlite')
    old = sa.MetaData()
    table = sa.Table('instances', old,
                     *[sa.Column(c.name, c.type, primary_key=c.primary_key,
                                 nullable=c.nullable) for c in OLD_COLUMNS])
    engine = sa.create_engine(url)
    old.create_all(engine)
    now = sa.func.current_timestamp()
    with engine.begin() as conn:
        conn.execute(table.insert().values(
            uuid='u-1', name='kept', flavor=json.dumps({'vcpus': 1}),
            vm_state='active', power_state=1, arq_uuids='[]',
            allocation_claimed=False, created_at=now, updated_at=now))
    engine.dispose()

    database = db.Database(url)
    database.create_schema()
    database.create_schema()  # a second start changes nothing
    columns = {c['name'] for c in sa.inspect(database.engine).get_columns(
        'instances')}
    assert {'retry', 'reservation_id'} <= columns
    instance = database.get('u-1')
    assert (instance.name, instance.retry, instance.reservation_id) == (
        'kept', None, None)
    database.update('u-1', retry={'num_attempts': 1, 'hosts': [['h', 'h']]},
                    reservation_id='r-1')
    assert database.get('u-1').retry == {'num_attempts': 1,
                                         'hosts': [['h', 'h']]}
    assert database.list_services() == []
    database.dispose()
