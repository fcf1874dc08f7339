"""The database handle: engine, sessions, and write retries.

One ``Database`` per conductor (and per test). Engines come from the
oslo.db enginefacade, configured from the ``[database]`` options of the
ConfigOpts passed in; nothing is global.

On SQLite, writer transactions open with ``BEGIN IMMEDIATE`` so that
concurrent writers queue on ``busy_timeout`` instead of failing when a
read lock would have to be upgraded, and the file runs in WAL mode so that
readers never wait for writers; connections to a file are pooled, so
that a transaction neither reopens the file nor, by closing the last
connection, checkpoints and deletes the log.
On PostgreSQL and MySQL, contention is settled by compare-and-swap
UPDATEs checked by rowcount, and work of one statement (a read, an ARQ
create) runs in autocommit, without BEGIN and COMMIT round trips.
"""

import contextlib
import contextvars
import functools
import logging
import random
import threading
import time

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import orm

from lite_common import mysql_text

LOG = logging.getLogger(__name__)

_WRITE_VERBS = ('INSERT', 'UPDATE', 'DELETE')


def shown_url(url: str) -> str:
    """A database URL as it may be printed: without its password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy reads: nothing to hide
        return url


class RetryTransaction(Exception):
    """Raised inside a writer to start the whole transaction again, for
    example after losing a compare-and-swap race."""


class StatementCounter:
    """Counts the SQL statements an engine runs, split into reads and
    writes; tests and benchmarks use it to prove O(changes) work."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reads = 0
        self.writes = 0

    def record(self, statement: str) -> None:
        verb = statement.lstrip().split(None, 1)[0].upper()
        with self._lock:
            if verb in _WRITE_VERBS:
                self.writes += 1
            elif verb == 'SELECT':
                self.reads += 1

    def snapshot(self) -> tuple[int, int]:
        return self.reads, self.writes


class Database:
    """Sessions on one database, built from a ``[database]`` group."""

    def __init__(self, conf):
        db_conf = conf.database
        self._context = enginefacade.transaction_context()
        self._context.configure(
            connection=mysql_text.with_utf8mb4(db_conf.connection),
            sqlite_fk=True,
            max_retries=db_conf.max_retries,
            retry_interval=db_conf.retry_interval,
            max_pool_size=db_conf.max_pool_size,
            max_overflow=db_conf.max_overflow,
            pool_timeout=db_conf.pool_timeout,
            connection_recycle_time=db_conf.connection_recycle_time,
            # oslo.db's check-in hook is a time.sleep(0) for eventlet;
            # these services run on native threads.
            thread_checkin=False,
        )
        self.engine = self._context.writer.get_engine()
        self.is_sqlite = self.engine.dialect.name == 'sqlite'
        self.counter = StatementCounter()
        # {profile name: its JSON as read} of the one-accelerator
        # profiles ARQs were created from here (see db.api.arq_create).
        self.known_profiles = {}
        sa.event.listen(self.engine, 'before_cursor_execute',
                        self._count_statement)
        writer_engine = self.engine
        if self.is_sqlite:
            _setup_sqlite(self.engine)
            _pool_sqlite_file_connections(self.engine, db_conf.max_pool_size)
            writer_engine = self.engine.execution_options(
                cyborg_immediate=True)
        self._writer_engine = writer_engine
        # Work of one statement needs no transaction of its own: in
        # autocommit the server wraps each statement in one, which saves
        # the BEGIN and COMMIT (or ROLLBACK) round trips. SQLite stays as
        # it is: its BEGIN is local, and writers must queue (below).
        self._autocommit_engine = (None if self.is_sqlite else
                                   self.engine.execution_options(
                                       isolation_level='AUTOCOMMIT'))
        # SQLite allows one writer at a time. Writers of this process
        # queue on a lock, which hands over at once, rather than on
        # SQLite's busy handler, which sleeps up to 100 ms between tries;
        # busy_timeout still settles writers of other processes.
        self._write_turn = (threading.RLock() if self.is_sqlite
                            else contextlib.nullcontext())
        self._reader = orm.sessionmaker(bind=self.engine,
                                        expire_on_commit=False)
        self._writer = orm.sessionmaker(bind=writer_engine,
                                        expire_on_commit=False)

    def _count_statement(self, conn, cursor, statement, *args):
        self.counter.record(statement)

    @contextlib.contextmanager
    def reader(self):
        """A read-only session in one transaction."""
        with self._reader() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def writer(self):
        """A session whose transaction commits on success."""
        with self._write_turn, self._writer() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def read_connection(self):
        """A Core connection for reads of one statement each: cheaper
        than a session, for the paths every ARQ lifecycle takes."""
        with (self.engine if self.is_sqlite else
              self._autocommit_engine).connect() as conn:
            yield conn

    @contextlib.contextmanager
    def autocommit_connection(self):
        """A Core connection where every statement commits on its own,
        for writes that are one statement and need nothing read before
        them to stay unchanged. On SQLite it is a write transaction."""
        if self.is_sqlite:
            with self.write_connection() as conn:
                yield conn
        else:
            with self._autocommit_engine.connect() as conn:
                yield conn

    @contextlib.contextmanager
    def write_connection(self):
        """A Core connection whose transaction commits on success."""
        with self._write_turn, self._writer_engine.begin() as conn:
            yield conn

    def dispose(self) -> None:
        self.engine.dispose()


def _setup_sqlite(engine) -> None:
    @sa.event.listens_for(engine, 'connect')
    def _pragmas(dbapi_con, record):
        dbapi_con.execute('PRAGMA busy_timeout = 30000')
        if engine.url.database not in (None, '', ':memory:'):
            # WAL with synchronous=NORMAL never corrupts the file; a power
            # cut may lose the last commits, not tear them.
            dbapi_con.execute('PRAGMA journal_mode = WAL')
            dbapi_con.execute('PRAGMA synchronous = NORMAL')

    # oslo.db emits a plain BEGIN from its own 'begin' listener; replace
    # it with one that opens writers with BEGIN IMMEDIATE.
    for listener in list(engine.dispatch.begin):
        if getattr(listener, '__name__', '') == '_sqlite_emit_begin':
            sa.event.remove(engine, 'begin', listener)

    @sa.event.listens_for(engine, 'begin')
    def _begin(conn):
        if 'in_transaction' not in conn.info:
            immediate = conn.get_execution_options().get('cyborg_immediate')
            # Straight to the driver: through exec_driver_sql, SQLAlchemy's
            # execution machinery cost more than the BEGIN itself.
            conn.connection.driver_connection.execute(
                'BEGIN IMMEDIATE' if immediate else 'BEGIN')
            conn.info['in_transaction'] = True


def _pool_sqlite_file_connections(engine, pool_size: int | None) -> None:
    """Give a SQLite file's engine a pool of connections.

    oslo.db gives SQLite files no pool (NullPool): every transaction
    opened the file, ran the connect-time PRAGMAs, and closed it; the
    close of the last connection checkpointed the write-ahead log and
    deleted it. That cost a millisecond per write transaction, more than
    its SQL. Pooled connections stay open between transactions (and may
    move between threads: each is used by one thread at a time); the log
    is still checkpointed as it grows, and when the engine is disposed
    of. In-memory databases keep oslo.db's single static connection.
    """
    path = engine.url.database
    if path in (None, '', ':memory:') or path.startswith('file:'):
        return
    cargs, cparams = engine.dialect.create_connect_args(engine.url)
    cparams['check_same_thread'] = False
    dbapi = engine.dialect.loaded_dbapi
    old = engine.pool
    # As Pool.recreate() does: the engine's connect listeners (PRAGMAs)
    # travel with the dispatcher.
    engine.pool = sa.pool.QueuePool(
        lambda: dbapi.connect(*cargs, **cparams),
        pool_size=pool_size or 5, max_overflow=-1,
        recycle=old._recycle, echo=old.echo,
        reset_on_return=old._reset_on_return,
        _dispatch=old.dispatch, dialect=old._dialect)
    old.dispose()


def _is_retriable(exc: Exception) -> bool:
    if isinstance(exc, (RetryTransaction, db_exc.DBDeadlock,
                        db_exc.DBConnectionError)):
        return True
    text = str(exc).lower()
    return isinstance(exc, (sa_exc.OperationalError,
                            db_exc.DBError)) and (
        'database is locked' in text or 'could not serialize' in text)


# Set while retry_on_conflict runs a writer again after its previous
# attempt lost the connection (see after_lost_connection()).
_AFTER_LOST_CONNECTION = contextvars.ContextVar('after_lost_connection',
                                                default=False)


def after_lost_connection() -> bool:
    """Inside a writer that ``retry_on_conflict`` runs again: whether
    an earlier attempt lost its connection. Its COMMIT may then have
    happened, the answer alone being lost, so that the writer finds its
    own work done: a writer that works out its result from what it
    finds says so instead of reporting that nothing was there."""
    return _AFTER_LOST_CONNECTION.get()


def retry_on_conflict(attempts: int = 10):
    """Run a writer function again, with jittered back-off, when its
    transaction lost a race (a failed compare-and-swap, a deadlock,
    SQLite's "database is locked") or the connection dropped (see
    ``after_lost_connection``)."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            lost = False
            for attempt in range(attempts):
                token = _AFTER_LOST_CONNECTION.set(lost)
                try:
                    return func(*args, **kwargs)
                except Exception as exc:
                    if not _is_retriable(exc) or attempt == attempts - 1:
                        raise
                    lost = lost or isinstance(exc, db_exc.DBConnectionError)
                    LOG.debug('%s: retrying after %s', func.__name__, exc)
                    time.sleep(random.uniform(0, 0.005 * (2 ** attempt)))
                finally:
                    _AFTER_LOST_CONNECTION.reset(token)
        return wrapper
    return decorator
