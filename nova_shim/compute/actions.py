"""Instance actions: what was asked of each instance, and how the work
went (Nova's ``os-instance-actions``; ``openstack server event list``).

An action is one request's on one instance, under the request's id: the
API records it (``record_action``) once it has checked who asks, as
Nova's compute API does, and forgets it again (``forget_action``) when
the compute refuses the operation (a 4xx), since Nova records no action
for a request it refuses. The work then reports its steps as events of
that action:

    with actions.event(deps, ctx, instance.uuid, 'compute_resize_instance',
                       host=deps.host):
        ...

records the event's start, then its end with the result 'Success', or
'Error' with the failure's message (``details``) and traceback, and the
action's message 'Error', as Nova's ``EventReporter`` does; the failure
goes on up. ``fail_event`` records a failure after the fact.

An event finds its action by the context's request id. Where none is
recorded (work that no request asked for, or a context of the service's
own), the event is logged and not recorded: an action is never made up
for it. An action recorded while its event runs (a build's thread may
start before the API has recorded ``create``) still gets the event.
Recording is bookkeeping: a database error in it is logged and never
replaces the work's own outcome.

Actions outlive their instance, as in Nova: a deleted server's actions
stay readable by its project (whose ``create`` action says which it
was) and by admins.
"""

import contextlib
import datetime
import logging
import traceback as traceback_module
from typing import Any, Iterator
import uuid as uuidlib

from nova_shim.compute.deps import ComputeDeps
from nova_shim.context import RequestContext
from nova_shim import exception

LOG = logging.getLogger(__name__)

# Nova's names of the actions of a server's creation and deletion.
CREATE = 'create'
DELETE = 'delete'
# An event's results, as Nova writes them.
SUCCESS = 'Success'
ERROR = 'Error'
# The most characters of a traceback or message kept with an event (a
# MySQL TEXT holds 64 KiB, up to 4 bytes a character).
MAX_TEXT = 16000


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def request_id(ctx: RequestContext) -> str:
    """The context's request id; one (``req-<uuid>``) given to a context
    that has none, so that its events find the action."""
    if not ctx.request_id:
        ctx.request_id = 'req-' + str(uuidlib.uuid4())
    return ctx.request_id


def record_action(deps: ComputeDeps, ctx: RequestContext,
                  instance_uuid: str, action: str) -> dict[str, Any]:
    """Record that the context's request asked ``action`` (Nova's name:
    ``stop``, ``live-migration``...) of the instance, on behalf of the
    context's user and project."""
    return deps.db.start_action(instance_uuid, request_id(ctx), action,
                                ctx.user_id, ctx.project_id)


def forget_action(deps: ComputeDeps, ctx: RequestContext,
                  instance_uuid: str) -> None:
    """Delete the context's action on the instance (and its events): the
    operation was refused."""
    if ctx.request_id:
        deps.db.forget_action(instance_uuid, ctx.request_id)


def _details(exc: BaseException) -> str:
    """What an event shows of a failure, as Nova: the message of one of
    nova_shim's exceptions, the class name of any other (whose message
    may tell more of the deployment than a caller should read)."""
    if isinstance(exc, exception.NovaShimException):
        return str(exc)[:MAX_TEXT]
    return type(exc).__name__


def _traceback(exc: BaseException) -> str | None:
    if exc.__traceback__ is None:
        return None
    return ''.join(traceback_module.format_exception(exc))[-MAX_TEXT:]


class _Event:
    """One event's bookkeeping (see ``event``)."""

    def __init__(self, deps: ComputeDeps, ctx: RequestContext,
                 instance_uuid: str, name: str, host: str | None) -> None:
        self.db = deps.db
        self.instance_uuid = instance_uuid
        self.request_id = ctx.request_id
        self.name = name
        self.host = host
        self.started = _now()
        self.event_id: int | None = None

    def start(self) -> None:
        if self.request_id:
            self.event_id = self._insert()

    def finish(self, exc: BaseException | None) -> None:
        if self.event_id is None and self.request_id:
            # The action may have been recorded since the event began.
            self.event_id = self._insert()
        if self.event_id is None:
            LOG.info('instance %s: no action of request %s; event %s not '
                     'recorded', self.instance_uuid, self.request_id,
                     self.name)
            return
        try:
            if exc is None:
                self.db.finish_action_event(self.event_id, SUCCESS)
            else:
                self.db.finish_action_event(
                    self.event_id, ERROR, traceback=_traceback(exc),
                    details=_details(exc))
        except Exception:  # noqa: BLE001 - the work's outcome comes first
            LOG.warning('instance %s: the end of event %s was not '
                        'recorded', self.instance_uuid, self.name,
                        exc_info=True)

    def _insert(self) -> int | None:
        try:
            return self.db.start_action_event(
                self.instance_uuid, self.request_id, self.name,
                host=self.host, start_time=self.started)
        except Exception:  # noqa: BLE001 - the work's outcome comes first
            LOG.warning('instance %s: event %s was not recorded',
                        self.instance_uuid, self.name, exc_info=True)
            return None


@contextlib.contextmanager
def event(deps: ComputeDeps, ctx: RequestContext, instance_uuid: str,
          event_name: str, host: str | None = None) -> Iterator[None]:
    """Record the block as event ``event_name`` (Nova names them
    ``compute_<operation>``, ``conductor_<operation>``) of the context's
    action on the instance, on ``host``: its start, then its end with
    'Success', or with 'Error', the failure's message and traceback,
    the failure going on up."""
    recording = _Event(deps, ctx, instance_uuid, event_name, host)
    recording.start()
    try:
        yield
    except BaseException as exc:
        recording.finish(exc)
        raise
    recording.finish(None)


def fail_event(deps: ComputeDeps, ctx: RequestContext, instance_uuid: str,
               event_name: str, exc: BaseException,
               host: str | None = None) -> None:
    """Record event ``event_name`` as failed with ``exc`` (its traceback
    too, if it was raised): for a failure known only once it happened."""
    recording = _Event(deps, ctx, instance_uuid, event_name, host)
    recording.finish(exc)


# -- reads, for the API ------------------------------------------------------


def list_actions(deps: ComputeDeps, instance_uuid: str,
                 limit: int | None = None,
                 after: dict[str, Any] | None = None,
                 changes_since: datetime.datetime | None = None,
                 changes_before: datetime.datetime | None = None
                 ) -> list[dict[str, Any]]:
    """The instance's actions, newest first (``Database.list_actions``:
    a page of ``limit`` after the action ``after``, updated within the
    given times)."""
    return deps.db.list_actions(instance_uuid, limit=limit, after=after,
                                changes_since=changes_since,
                                changes_before=changes_before)


def get_action(deps: ComputeDeps, instance_uuid: str, request_id: str,
               events: bool = False) -> dict[str, Any] | None:
    """The request's action on the instance (with its events, newest
    first, if asked), or None."""
    return deps.db.get_action(instance_uuid, request_id, events=events)


def deleted_instance_project(deps: ComputeDeps,
                             instance_uuid: str) -> str | None:
    """The project of an instance that is gone, as its ``create`` action
    recorded it; None when no such action is kept."""
    created = [a for a in deps.db.list_actions(instance_uuid)
               if a['action'] == CREATE]
    return created[-1]['project_id'] if created else None
