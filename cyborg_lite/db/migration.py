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


class NewerSchema(Exception):
    """The database is at a revision this code does not know: a newer
    release migrated it."""

    def __init__(self, revision):
        super().__init__(
            'The database schema is at %s, a revision this cyborg-lite '
            'does not know (its newest is %s): a newer release upgraded '
            'it. Run that release, or restore the database from before '
            'the upgrade.' % (revision, head()))
        self.revision = revision


def known(revision: str) -> bool:
    """Whether ``revision`` is one of this code's migrations."""
    from alembic import script
    from alembic.util import exc as alembic_exc
    try:
        return script.ScriptDirectory.from_config(
            _config(None)).get_revision(revision) is not None
    except alembic_exc.CommandError:
        return False


def _check_not_newer(connection) -> None:
    current = migration.MigrationContext.configure(
        connection).get_current_revision()
    if current is not None and not known(current):
        raise NewerSchema(current)


def upgrade(db, revision: str = 'head') -> None:
    """Upgrade the schema of a ``Database``;
    NewerSchema if a newer release has upgraded it already."""
    with db.engine.begin() as connection:
        _check_not_newer(connection)
        command.upgrade(_config(connection), revision)


def stamp(db, revision: str = 'head') -> None:
    with db.engine.begin() as connection:
        _check_not_newer(connection)
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
