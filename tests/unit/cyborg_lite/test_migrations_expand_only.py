"""Database migrations only expand the schema (expand before contract).

A rolling upgrade runs ``cyborg-lite-dbsync upgrade`` while the previous
release's conductors still serve: what they read and write must stay.
So a migration's ``upgrade()`` may create tables and indexes and add
columns that older code can leave out of its INSERTs (nullable, or with
a server default); it may not drop or rename a table or column, nor
change a column, except where ``CONTRACTS`` lists it with the reason
older code is unaffected. Read from the migrations' source, so a new
migration is held to it from its first line.
"""

import ast
import os

import pytest

from cyborg_lite.db import migration

VERSIONS = os.path.join(os.path.dirname(migration.__file__), 'alembic',
                        'versions')
EXPANDING = {'create_table', 'create_index', 'add_column',
             'get_bind', 'execute',
             # A container: the operations inside it are checked.
             'batch_alter_table'}
# The first migration creates the schema: nothing older runs beside it.
INITIAL = '0001_initial_schema.py'
# (migration file, alembic operation) -> why the older code is unaffected.
CONTRACTS = {
    ('0002_free_handles_in_id_order.py', 'drop_index'):
        'the index it drops is replaced in the same migration by one '
        'that serves the same queries; no code names an index',
    ('0003_indexes_and_mysql_text.py', 'alter_column'):
        'MySQL only: widens DATETIME to microseconds and TEXT to '
        'MEDIUMTEXT, which every older release reads and writes as '
        'before',
}
# execute() runs raw SQL: allowed only where listed, with its reason.
RAW_SQL = {
    '0003_indexes_and_mysql_text.py':
        'MySQL only: converts the tables to utf8mb4 with binary '
        'collation, which widens what a text column takes',
}


def _migrations(initial=False):
    return sorted(name for name in os.listdir(VERSIONS)
                  if name[:4].isdigit() and name.endswith('.py')
                  and (initial or name != INITIAL))


def _upgrade_ops(name):
    with open(os.path.join(VERSIONS, name)) as f:
        tree = ast.parse(f.read())
    [upgrade] = [node for node in tree.body
                 if isinstance(node, ast.FunctionDef)
                 and node.name == 'upgrade']
    for node in ast.walk(upgrade):
        if (isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ('op', 'batch_op')):
            yield node.func.attr, node


def _column_insertable(call):
    """Whether an ``add_column``'s column may be left out of an INSERT:
    nullable (the default) or with a server default."""
    [column] = [arg for arg in call.args if isinstance(arg, ast.Call)]
    keywords = {k.arg: k.value for k in column.keywords}
    nullable = keywords.get('nullable')
    if nullable is None or (isinstance(nullable, ast.Constant)
                            and nullable.value):
        return True
    return 'server_default' in keywords


def test_the_migrations_are_found():
    assert INITIAL in _migrations(initial=True)
    assert len(_migrations()) >= 6
    assert migration.head() in ' '.join(_migrations())


@pytest.mark.parametrize('name', _migrations())
def test_each_migration_only_expands(name):
    for op, call in _upgrade_ops(name):
        if op == 'execute':
            assert name in RAW_SQL, (name, 'raw SQL in an upgrade')
        elif op == 'add_column':
            assert _column_insertable(call), (
                name, 'adds a NOT NULL column without a server default: '
                      'older code inserts rows without it')
        elif op not in EXPANDING:
            assert (name, op) in CONTRACTS, (
                name, op, 'contracts the schema under running older '
                          'services')


def test_every_listed_contract_is_still_there():
    ops = {(name, op) for name in _migrations()
           for op, _ in _upgrade_ops(name)}
    assert set(CONTRACTS) <= ops
