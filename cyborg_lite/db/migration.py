"""Schema migrations with alembic: upgrade, version and stamp.

The alembic environment lives in ``cyborg_lite/db/alembic``; its
configuration is built here in code, so no alembic.ini is needed.
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration
import sqlalchemy as sa

_SCRIPT_LOCATION = os.path.join(os.path.dirname(__file__), 'alembic')


def _config(connection) -> alembic_config.Config:
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', _SCRIPT_LOCATION)
    cfg.attributes['connection'] = connection
    return cfg


def upgrade(db, revision: str = 'head') -> None:
    """Upgrade the schema of a :class:`~cyborg_lite.db.engine.Database`."""
    with db.engine.begin() as connection:
        command.upgrade(_config(connection), revision)


def stamp(db, revision: str = 'head') -> None:
    with db.engine.begin() as connection:
        command.stamp(_config(connection), revision)


def version(db) -> str | None:
    """The revision the database is at, or None if it is not versioned."""
    with db.engine.connect() as connection:
        return migration.MigrationContext.configure(
            connection).get_current_revision()


def head() -> str:
    from alembic import script
    return script.ScriptDirectory.from_config(
        _config(None)).get_current_head()


def has_tables(db) -> bool:
    return bool(sa.inspect(db.engine).get_table_names())
