"""Calls that meet the database gone for a moment are run again.

A PostgreSQL restart (or a fail-over behind a proxy) cuts every
session: the statements running then fail, and new connections are
refused for the moment the server takes to start. A conductor call
whose method is in ``cyborg_lite.conductor.retries.RETRIED`` (a read, or
a write whose repeat finds its own work done, with ``REPEAT_KWARGS``)
is run again here, for up to ``WITHIN`` seconds, instead of failing its
caller; any other call fails as before (503 at the API). ``WITHIN``
stays under the API's call monitor timeout (``[api]
rpc_call_monitor_timeout``, 3 s), past which the API takes the call for
lost and sends it again itself.
"""

import functools
import logging
import time

from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from cyborg_lite.conductor import retries

LOG = logging.getLogger(__name__)

# What a cut session or a refused connection raises, through oslo.db
# and SQLAlchemy, or (from a connection's reset) the driver itself, whose
# error classes are named as the DB-API names them.
DATABASE_AWAY = (db_exc.DBConnectionError, sa_exc.OperationalError,
                 sa_exc.DisconnectionError)
DRIVER_ERRORS = frozenset({'OperationalError', 'AdminShutdown'})


def database_away(exc):
    """Whether ``exc`` says the database went away for now."""
    return isinstance(exc, DATABASE_AWAY) or any(
        cls.__name__ in DRIVER_ERRORS for cls in type(exc).__mro__)
WITHIN = 2.5
FIRST_PAUSE = 0.1
LAST_PAUSE = 0.5


def repeatable(method, kwargs):
    """Whether a call of ``method`` with ``kwargs`` may run again: an ARQ
    create only with its idempotency key (RPC API 1.2)."""
    if method == 'arq_create':
        return bool(kwargs.get('idempotency_key'))
    return method in retries.RETRIED


def survive_restarts(cls):
    """Class decorator: each method of ``cls`` named in ``RETRIED`` runs
    again after ``DATABASE_AWAY``, as the module says."""
    for name in retries.RETRIED:
        method = cls.__dict__.get(name)
        if method is not None:
            setattr(cls, name, _again_after_faults(name, method))
    return cls


def _again_after_faults(name, method):
    @functools.wraps(method)
    def call(self, ctx, *args, **kwargs):
        deadline = time.monotonic() + WITHIN
        pause = FIRST_PAUSE
        while True:
            try:
                return method(self, ctx, *args, **kwargs)
            except Exception as exc:
                if not database_away(exc) or args or \
                        not repeatable(name, kwargs) or \
                        time.monotonic() + pause > deadline:
                    raise
                LOG.warning('%s met the database away (%s); running it '
                            'again in %.1f s', name, type(exc).__name__,
                            pause)
                time.sleep(pause)
                pause = min(2 * pause, LAST_PAUSE)
                kwargs = dict(kwargs, **retries.REPEAT_KWARGS.get(name, {}))
    return call
