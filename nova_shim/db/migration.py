"""The schema of nova_shim's database, by alembic migrations.

``nova-shim-manage db sync`` runs ``upgrade``; the compute service
checks ``is_current`` before it serves (or migrates itself with
``[database] sync_on_startup``, as the all-in-one does). The alembic
environment lives in ``nova_shim/db/alembic``; its configuration is
built here in code, so no alembic.ini is needed.

A database made before the migrations existed (by the compute service
itself, at start-up) has the tables and no version: ``upgrade``
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
# The migration that made what a database from before them holds, and
# the nullable columns such a database may lack (older releases added
# them at start-up).
FIRST = '0001_initial'
LEGACY_COLUMNS = {'instances': ('retry', 'reservation_id')}


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
            _add_missing_columns(connection)
            command.stamp(_config(connection), FIRST)
        command.upgrade(_config(connection), revision)


def _add_missing_columns(connection) -> None:
    """Add the nullable columns of the first migration that a database
    from an older release lacks."""
    inspector = sa.inspect(connection)
    for name, columns in LEGACY_COLUMNS.items():
        table = models.METADATA.tables[name]
        present = {c['name'] for c in inspector.get_columns(name)}
        for column in columns:
            if column in present:
                continue
            kind = table.c[column].type.compile(dialect=connection.dialect)
            connection.execute(sa.text('ALTER TABLE %s ADD COLUMN %s %s' % (
                name, column, kind)))
