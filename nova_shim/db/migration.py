"""The schema of nova_shim's database, by alembic migrations.

``nova-shim-manage db sync`` runs :func:`upgrade`; the compute service
checks :func:`is_current` before it serves (or migrates itself with
``[database] sync_on_startup``, as the all-in-one does). The alembic
environment lives in ``nova_shim/db/alembic``; its configuration is
built here in code, so no alembic.ini is needed.

A database made before the migrations existed (by the compute service
itself, at start-up) has the tables and no version: :func:`upgrade`
adds the nullable columns it may lack, records it at the first
migration, and carries on from there.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration
from alembic import script
import sqlalchemy as sa

from nova_shim.db import models

_SCRIPT_LOCATION = os.path.join(os.path.dirname(__file__), 'alembic')
# The migration that made what a database from before them holds.
FIRST = '0001_initial'


def _config(connection) -> alembic_config.Config:
    config = alembic_config.Config()
    config.set_main_option('script_location', _SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


def head() -> str:
    """The newest migration of this code."""
    return script.ScriptDirectory.from_config(
        _config(None)).get_current_head()


def version(engine: sa.engine.Engine) -> str | None:
    """The migration the database is at, or None if it has none."""
    with engine.connect() as connection:
        return migration.MigrationContext.configure(
            connection).get_current_revision()


def is_current(engine: sa.engine.Engine) -> bool:
    return version(engine) == head()


def upgrade(engine: sa.engine.Engine, revision: str = 'head') -> None:
    """Migrate the database to ``revision`` (the newest by default),
    adopting one made before the migrations first."""
    with engine.begin() as connection:
        tables = set(sa.inspect(connection).get_table_names())
        current = migration.MigrationContext.configure(
            connection).get_current_revision()
        if current is None and 'instances' in tables:
            _add_missing_columns(connection, ('instances', 'services'))
            command.stamp(_config(connection), FIRST)
        command.upgrade(_config(connection), revision)


def _add_missing_columns(connection, names) -> None:
    """Add the nullable columns that a database from an older release
    lacks (the compute service made its tables, not their new
    columns)."""
    inspector = sa.inspect(connection)
    for table in models.METADATA.sorted_tables:
        if table.name not in names:
            continue
        present = {c['name'] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in present or not column.nullable:
                continue
            kind = column.type.compile(dialect=connection.dialect)
            connection.execute(sa.text('ALTER TABLE %s ADD COLUMN %s %s' % (
                table.name, column.name, kind)))
