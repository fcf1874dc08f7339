"""Engine facade, transactions, migrations and the standard rows.

DB functions in this package are context-first: ``fn(ctx, ...)``, run
inside ``@reader`` or ``@writer`` so that nested calls share one
transaction.
"""

import functools
import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from lite_common import mysql_text
from placement_stub.db import models
from placement_stub import standard

ALEMBIC_DIR = os.path.join(os.path.dirname(__file__), 'alembic')


def create_facade(conf):
    """An enginefacade transaction context for ``[placement_database]``."""
    db = conf.placement_database
    facade = enginefacade.transaction_context()
    facade.configure(connection=mysql_text.with_utf8mb4(db.connection),
                     sqlite_synchronous=db.sqlite_synchronous,
                     max_pool_size=db.max_pool_size,
                     max_overflow=db.max_overflow,
                     pool_timeout=db.pool_timeout,
                     connection_recycle_time=db.connection_recycle_time)
    engine = facade.writer.get_engine()
    if engine.dialect.name == 'sqlite':
        _serialize_sqlite_writers(engine)
    return facade


def _serialize_sqlite_writers(engine) -> None:
    """Let concurrent requests share a SQLite file without "database is
    locked": WAL (readers never wait for a writer), a busy timeout, and
    every transaction opened with BEGIN IMMEDIATE, so that a transaction
    that reads then writes waits for the write lock up front instead of
    failing when it tries to take it. (oslo.db emits a plain BEGIN from
    its own 'begin' listener; ours replaces it.)"""
    @sa.event.listens_for(engine, 'connect')
    def _pragmas(dbapi_con, record):
        dbapi_con.execute('PRAGMA busy_timeout = 30000')
        if engine.url.database not in (None, '', ':memory:'):
            dbapi_con.execute('PRAGMA journal_mode = WAL')

    for listener in list(engine.dispatch.begin):
        if getattr(listener, '__name__', '') == '_sqlite_emit_begin':
            sa.event.remove(engine, 'begin', listener)

    @sa.event.listens_for(engine, 'begin')
    def _begin_immediate(conn):
        if 'in_transaction' not in conn.info:
            conn.exec_driver_sql('BEGIN IMMEDIATE')
            conn.info['in_transaction'] = True


def reader(fn):
    """Run ``fn(ctx, ...)`` in a (possibly enclosing) read transaction."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with ctx.facade.reader.using(ctx):
            return fn(ctx, *args, **kwargs)
    return wrapper


def writer(fn):
    """Run ``fn(ctx, ...)`` in a (possibly enclosing) write transaction."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with ctx.facade.writer.using(ctx):
            return fn(ctx, *args, **kwargs)
    return wrapper


def ids_by_name(ctx, model_cls, names) -> dict:
    """``{name: id}`` of the rows of a named table (resource classes,
    traits) for those of ``names`` that exist; call inside a
    transaction."""
    if not names:
        return {}
    table = model_cls.__table__
    rows = ctx.session.connection().execute(
        sa.select(table.c.name, table.c.id)
        .where(table.c.name.in_(sorted(names))))
    return dict(rows.all())


def alembic_cfg(connection) -> alembic_config.Config:
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', ALEMBIC_DIR)
    cfg.attributes['connection'] = connection
    return cfg


def upgrade(engine, revision='head') -> None:
    """Run the migrations up to ``revision``."""
    with engine.begin() as connection:
        alembic_command.upgrade(alembic_cfg(connection), revision)


def _insert_missing(connection, table, names) -> None:
    present = set(connection.execute(sa.select(table.c.name)).scalars())
    missing = [{'name': name, 'created_at': models._now()}
               for name in names if name not in present]
    if missing:
        connection.execute(table.insert(), missing)


def sync(facade) -> None:
    """Migrate, then add the standard resource classes and traits."""
    engine = facade.writer.get_engine()
    upgrade(engine)
    with engine.begin() as connection:
        _insert_missing(connection, models.ResourceClass.__table__,
                        standard.RESOURCE_CLASSES)
        _insert_missing(connection, models.Trait.__table__, standard.TRAITS)
