"""A conductor's pool keeps enough PostgreSQL connections for the calls
it serves at once (two gunicorn workers of eight API threads), so that a
busy conductor reuses its connections instead of starting a server
process per transaction."""

import threading
import time

import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.db import engine
from tests.fixtures import databases

API_THREADS = 16
ROUNDS = 4


def test_sixteen_concurrent_transactions_reuse_their_connections():
    conf = cl_conf.build_conf()
    assert conf.database.max_pool_size == API_THREADS
    with databases.pg_database() as url:
        db = engine.Database(cl_conf.build_conf(
            overrides={('database', 'connection'): url}))
        backends, lock = set(), threading.Lock()

        def transaction(barrier):
            barrier.wait()
            with db.write_connection() as conn:
                pid = conn.scalar(sa.text('SELECT pg_backend_pid()'))
                # Hold the connection until every thread has one.
                time.sleep(0.05)
            with lock:
                backends.add(pid)

        try:
            for _ in range(ROUNDS):
                barrier = threading.Barrier(API_THREADS)
                threads = [threading.Thread(target=transaction,
                                            args=(barrier,))
                           for _ in range(API_THREADS)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
        finally:
            db.dispose()
    # oslo.db's pool of 5 would have opened 11 overflow connections in
    # every round, each a new server process: 5 + 4 * 11 backends.
    assert len(backends) <= API_THREADS
