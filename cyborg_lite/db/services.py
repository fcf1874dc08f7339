"""The services table: which services run, where, at which RPC API
version.

Each conductor records itself when it starts and again every ``[conductor]
report_interval`` seconds (``record``). ``versions`` lists the records
renewed within ``[conductor] service_down_time``: what ``[upgrade_levels]
conductor = auto`` reads to cap the other services' calls at the oldest
running conductor's version, as Nova's services table does for its
``auto``. A service that stopped for good is left in the table and
no longer counts once its record is older than that.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg_lite.db import models

CONDUCTOR = 'cyborg-lite-conductor'

_TABLE = models.Service.__table__


def record(db, host, binary, rpc_version) -> None:
    """Record that ``binary`` runs on ``host`` at ``rpc_version``, now."""
    now = timeutils.utcnow()
    where = (_TABLE.c.host == host) & (_TABLE.c.binary == binary)
    with db.writer() as session:
        if session.execute(_TABLE.update().where(where).values(
                rpc_version=rpc_version, updated_at=now)).rowcount:
            return
    try:
        with db.writer() as session:
            session.execute(_TABLE.insert().values(
                host=host, binary=binary, rpc_version=rpc_version,
                created_at=now, updated_at=now))
    except db_exc.DBDuplicateEntry:
        # Recorded in between by a process of the same name.
        with db.writer() as session:
            session.execute(_TABLE.update().where(where).values(
                rpc_version=rpc_version, updated_at=now))


def versions(db, binary, down_time, now=None) -> list[dict]:
    """``{host, rpc_version, updated_at}`` of each ``binary`` whose
    record is at most ``down_time`` seconds old, by host."""
    cutoff = (now or timeutils.utcnow()) - datetime.timedelta(
        seconds=down_time)
    with db.reader() as session:
        rows = session.execute(
            sa.select(_TABLE.c.host, _TABLE.c.rpc_version,
                      _TABLE.c.updated_at)
            .where(_TABLE.c.binary == binary,
                   _TABLE.c.updated_at >= cutoff)
            .order_by(_TABLE.c.host)).all()
    return [{'host': row.host, 'rpc_version': row.rpc_version,
             'updated_at': row.updated_at.isoformat()} for row in rows]
