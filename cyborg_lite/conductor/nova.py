"""Telling Nova that ARQs are bound: ``accelerator-request-bound`` events.

Events go to ``POST /os-server-external-events`` at compute microversion
2.82, one per ARQ, with the ARQ uuid as the tag. They are sent from a
background thread after the bind commits, so a slow or absent Nova never
holds up a bind. After the first event of a POST the thread waits for
more; the events of that time, and those that queued up while the
thread was sending, go together in one POST (at most ``[nova]
events_per_request``), as Nova takes events of several servers in one
request: under load the conductor makes a fraction of the calls, and
spends a fraction of the CPU on them, that one POST per bind would.

How long it waits depends on whether Nova may be waiting for the
event. Nova's compute looks at its instance's ARQs before it waits
(``get_arqs_for_instance(only_resolved=True)``) and takes those it
finds resolved as events that came early: it never waits for the
events of ARQs that were resolved when their bind call answered, and
those wait up to ``[nova] resolved_events_wait`` for company. An ARQ
resolved later (an FPGA programmed, a bind the sweep took over) is one
Nova's compute may be waiting for: its event, and those gathered with
it, go within ``[nova] events_wait``.

A connection error or 5xx is retried ``[nova] event_retries`` times with
back-off, and so is a refusal of the conductor's credentials (401, 403:
a Nova whose policy does not yet know Cyborg's service user, a password
being rotated), logged with Nova's reason; a stop sends what is queued
once more and skips the waits and the back-off, so that a conductor
stops at once while Nova is away (its events are then lost, as Nova's
wait for them ends at ``arq_binding_timeout``, or sooner where Nova
finds the ARQs resolved).
The notifier is off when ``[nova]`` names neither an
``endpoint_override`` nor an ``auth_type``.
"""

import collections
import dataclasses
import logging
import queue
import threading
import time

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading

from cyborg_lite import states

LOG = logging.getLogger(__name__)

EVENT_NAME = 'accelerator-request-bound'
# Answers that say Nova did not take the events, for a reason that may
# pass: retried as a Nova that cannot be reached is.
REFUSED = frozenset({401, 403})
MICROVERSION = '2.82'
SENT_KEPT = 256


def build_events(arqs):
    """Events for resolved ARQs: ``[{name, server_uuid, tag, status}]``."""
    return [{'name': EVENT_NAME, 'server_uuid': arq['instance_uuid'],
             'tag': arq['uuid'], 'status': states.EVENT_STATUS[arq['state']]}
            for arq in arqs
            if arq['state'] in states.EVENT_STATUS and arq['instance_uuid']]


@dataclasses.dataclass(frozen=True)
class _Queued:
    """Events handed to the notifier together, and whether Nova may be
    waiting for them."""

    events: list
    awaited: bool


def _adapter(conf):
    group = 'nova'
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth,
        default_microversion=MICROVERSION, raise_exc=False)


class NovaNotifier:
    """Sends events from one background thread; ``notify`` never
    blocks on Nova."""

    def __init__(self, conf):
        self._conf = conf
        self.enabled = bool(conf.nova.endpoint_override or
                            conf.nova.auth_type)
        self._queue = queue.Queue()
        self._thread = None
        # Set by stop(): what is queued is sent once more, without the
        # back-off of further retries, so that a stop never waits on a
        # Nova that is away.
        self._stopping = threading.Event()
        # (events, status) of the latest POSTs, for tests and debugging;
        # bounded, as a conductor sends events for as long as it runs.
        self.sent = collections.deque(maxlen=SENT_KEPT)
        if self.enabled:
            self._adapter = _adapter(conf)

    def start(self):
        if self.enabled and self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name='nova-notifier')
            self._thread.start()

    def stop(self):
        if self._thread is not None:
            self._stopping.set()
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None

    def notify(self, arqs, awaited=True):
        """Queue the events of resolved ``arqs``. ``awaited``: whether
        Nova may be waiting for them; False for ARQs that were resolved
        before their bind call answered, which Nova finds resolved."""
        events = build_events(arqs)
        if self.enabled and events:
            self._queue.put(_Queued(events, awaited))

    def drain(self, timeout=10.0):
        """Wait until every queued event was handled (for tests)."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)

    def _run(self):
        while True:
            batch = self._gather(self._queue.get())
            most = self._conf.nova.events_per_request
            events = [e for item in batch if item for e in item.events]
            try:
                for start in range(0, len(events), most):
                    self._send(events[start:start + most])
            finally:
                for _item in batch:
                    self._queue.task_done()
            if None in batch:
                return

    def _gather(self, first):
        """``first`` and what queues up after it, up to ``[nova]
        events_per_request`` events: for ``[nova] resolved_events_wait``
        seconds, or ``[nova] events_wait`` from the first event Nova may
        be waiting for; a stop (None) ends the wait at once."""
        batch = [first]
        if first is None:
            return batch
        nova_conf = self._conf.nova
        wait = nova_conf.events_wait if first.awaited else max(
            nova_conf.events_wait, nova_conf.resolved_events_wait)
        deadline = time.monotonic() + wait
        count = len(first.events)
        while count < nova_conf.events_per_request:
            left = deadline - time.monotonic()
            try:
                item = (self._queue.get(timeout=left) if left > 0
                        else self._queue.get_nowait())
            except queue.Empty:
                break
            batch.append(item)
            if item is None:
                break
            count += len(item.events)
            if item.awaited:
                deadline = min(deadline,
                               time.monotonic() + nova_conf.events_wait)
        return batch

    def _send(self, events):
        delay = self._conf.nova.event_retry_delay
        for attempt in range(self._conf.nova.event_retries + 1):
            try:
                resp = self._adapter.post('/os-server-external-events',
                                          json={'events': events})
                status = resp.status_code
            except ks_exc.ClientException as exc:
                status, resp = None, exc
            self.sent.append((events, status))
            if status is not None and status < 500 and \
                    status not in REFUSED:
                _log_answer(events, status, resp)
                return
            LOG.warning('Nova did not take %d event(s) (%s); attempt %d',
                        len(events), _reason(status, resp), attempt + 1)
            if attempt == self._conf.nova.event_retries:
                break
            if self._stopping.wait(delay * (2 ** attempt)):
                LOG.warning('Stopping: %d event(s) for Nova not sent',
                            len(events))
                return
        LOG.error('Giving up on %d event(s) for Nova', len(events))


def _reason(status, resp):
    """Why Nova did not take events: its status and what it said, or
    the connection error."""
    if status is None:
        return str(resp)
    return '%s: %s' % (status, ' '.join(resp.text.split())[:300])


def _log_answer(events, status, resp):
    if status == 200:
        LOG.debug('Nova took %d event(s)', len(events))
        return
    # 207: some events went to instances unknown to Nova or without a
    # host yet (422); 404: all of them did. An instance without a host
    # picks its ARQs up with Nova's own early-exit check (nova
    # LP#1855752).
    LOG.info('Nova answered %s to %d event(s): %s', status, len(events),
             resp.text[:500])
