"""Program requests: an FPGA's programming asked through the API.

``PATCH /v2/deployables/{uuid}/program`` may take as long as the agent
lets its tool run (``[agent] fpga_program_timeout``, minutes), far
longer than an RPC call should wait, so the API does not wait on one
call: a conductor starts the programming and records it here, and the
API reads the request's row until it ends (see
``cyborg_lite.conductor.rpcapi.ConductorAPI.deployable_program``).

Each request has the id its API picked. Whoever writes the row first
decides its fate, by the unique index on ``request_id``:

* a conductor that starts the programming writes ``programming``;
* an API that heard nothing from any conductor writes ``abandoned``,
  so that a conductor that takes the request later (one that was busy,
  or that comes back) finds it given up and programs nothing.

While it programs, the conductor raises ``beats`` every
``PROGRAM_BEAT_INTERVAL`` seconds; the API
counts the time on its own clock, so a conductor lost mid-programming
is known within seconds without comparing two machines' clocks. The
row ends ``programmed`` or ``failed`` (with the error the API
answers). The conductors' sweep forgets rows a day after their last
change.
"""

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg_lite import states
from cyborg_lite.db import models

# Seconds a finished or abandoned request is kept.
KEPT_FOR = 24 * 3600

_TABLE = models.ProgramRequest.__table__


def _claim(db, request_id, state, **values) -> tuple[str, bool]:
    """Write the request as ``state`` unless it exists: the state it has
    after that, and whether this call wrote it."""
    now = timeutils.utcnow()
    try:
        with db.writer() as session:
            session.execute(_TABLE.insert().values(
                request_id=request_id, state=state, beats=0,
                created_at=now, updated_at=now, **values))
        return state, True
    except db_exc.DBDuplicateEntry:
        return get(db, request_id)['state'], False


def start(db, request_id, deployable_uuid, image_uuid) -> tuple[str, bool]:
    """Record the programming as started unless the request exists: its
    state, and whether this call started it (False for a repeat of a
    start, and for a request given up before)."""
    return _claim(db, request_id, states.PROGRAMMING,
                  deployable_uuid=deployable_uuid, image_uuid=image_uuid)


def abandon(db, request_id) -> str:
    """Give the request up unless a conductor started it; its state
    after that: ``abandoned``, or what the conductor made of it."""
    return _claim(db, request_id, states.PROGRAM_ABANDONED)[0]


def beat(db, request_id) -> bool:
    """One sign of life of the conductor at work; False when the row is
    no longer ``programming``."""
    with db.writer() as session:
        return session.execute(
            _TABLE.update()
            .where(_TABLE.c.request_id == request_id,
                   _TABLE.c.state == states.PROGRAMMING)
            .values(beats=_TABLE.c.beats + 1,
                    updated_at=timeutils.utcnow())).rowcount == 1


def finish(db, request_id, error=None) -> None:
    """End the programming: ``programmed``, or ``failed`` with the
    client-safe ``error``."""
    state = states.PROGRAM_FAILED if error else states.PROGRAMMED
    with db.writer() as session:
        session.execute(
            _TABLE.update()
            .where(_TABLE.c.request_id == request_id,
                   _TABLE.c.state == states.PROGRAMMING)
            .values(state=state, error=error,
                    updated_at=timeutils.utcnow()))


def get(db, request_id) -> dict | None:
    """``{state, beats, error, deployable_uuid}``, None when unknown."""
    with db.reader() as session:
        row = session.execute(
            sa.select(_TABLE.c.state, _TABLE.c.beats, _TABLE.c.error,
                      _TABLE.c.deployable_uuid)
            .where(_TABLE.c.request_id == request_id)).first()
    return None if row is None else dict(row._mapping)


def forget_old(db, now=None) -> int:
    """Delete requests unchanged for ``KEPT_FOR`` seconds; how many."""
    cutoff = (now or timeutils.utcnow()) - timeutils.datetime.timedelta(
        seconds=KEPT_FOR)
    with db.writer() as session:
        return session.execute(_TABLE.delete().where(
            _TABLE.c.updated_at < cutoff)).rowcount
