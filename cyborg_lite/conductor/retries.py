"""What the API does with a conductor call that a fault interrupts.

A call from the API can be interrupted two ways:

* **lost**: it was sent, and its conductor died (or the broker went
  away) before the answer came. It is known lost within seconds instead
  of at ``[api] rpc_timeout``: the API sends a call that may wait on an
  agent or Placement with oslo.messaging's ``call_monitor_timeout``
  (``[api] rpc_call_monitor_timeout``), so the conductor sends a
  heartbeat every half of it while the call runs, and a call that hears
  nothing for that long is lost; a call that keeps its heartbeats has
  all of ``rpc_timeout``, however long it works. A quick call
  (``quick``: a database read or
  create that does not list a whole table), answered in milliseconds,
  goes without heartbeats, which cost the conductor a thread per
  message, and is lost when it has no answer within that same time.
* **undelivered**: it could not be sent, because the broker is away.
  Nothing reached a conductor, so any call may be sent again.

A lost call may or may not have done its work, so it is sent again only
when repeating it is harmless: the methods of ``RETRIED``, each with
the reason. ``NOT_RETRIED`` says why the others are not; they answer
503 as soon as they are known lost, and those of one short transaction
(``QUICK_WRITES``) are sent so that
their messages expire then, so that a conductor that comes back does
not make a profile or attribute that the caller was told failed. A
repeat carries ``REPEAT_KWARGS``, which tell the conductor that the
call may have been done already.

``FaultPolicy`` tries again while an answer can still come within
``[api] rpc_fault_timeout`` seconds of the fault (counted from the last
sign of life of a lost call, or from the start of an undelivered one), so
that no caller waits longer than that because of a fault; the error of
the last attempt is raised after that (503 at the API).

The conductors of a topic share one queue, so the repeat of a call lost
with its conductor goes to another conductor: the broker drops a
consumer the moment its connection closes.
"""

import logging
import time

import oslo_messaging

LOG = logging.getLogger(__name__)

# Methods sent again after their attempt was lost, and why that is safe.
RETRIED = {
    'device_profile_list': 'a read',
    'device_profile_get': 'a read',
    'arq_list': 'a read',
    'arq_get': 'a read',
    'device_list': 'a read',
    'device_get': 'a read',
    'deployable_list': 'a read',
    'deployable_get': 'a read',
    'attribute_list': 'a read',
    'attribute_get': 'a read',
    'arq_create': 'the UUIDs of the new ARQs derive from the '
                  'idempotency_key the client picks once per call, so '
                  'a repeat whose first attempt created them finds '
                  'those ARQs and answers them, instead of creating a '
                  'second set (cyborg_lite.db.api.arq_create)',
    'arq_bind': 'a repeat finds an ARQ that the first attempt bound, '
                'or is binding, to the same host, device and instance '
                'and answers success without taking a second handle; '
                'Nova is told of a Bound one again, in case the first '
                'attempt died before telling it '
                '(cyborg_lite.db.binding.bind)',
    'arq_unbind': 'an Unbound ARQ stays as it is',
    'arq_delete': 'a repeat takes the ARQs it cannot find for deleted '
                  'by the first attempt; a delete by instance deletes '
                  'whatever is left',
    'deployable_program_start': 'a repeat carries the request id of the '
                                'first attempt and finds that request '
                                'started (or given up) instead of starting '
                                'a second programming '
                                '(cyborg_lite.db.programs)',
    'deployable_program_status': 'a read',
    'conductor_versions': 'a read',
    'deployable_program_abandon': 'a repeat finds the request as the first '
                                  'attempt left it, and answers its state',
    'device_set_status': 'sets the status (and the reserved inventory) '
                         'to the value asked, whatever it was',
}

# Methods that answer 503 when their attempt was lost, and why.
NOT_RETRIED = {
    'device_profile_create': 'a repeat of a create that succeeded would '
                             'answer 409 (the name is taken)',
    'device_profile_delete': 'a repeat of a delete that succeeded would '
                             'answer 404',
    'deployable_program': 'RPC API 1.0 programming in one call, which '
                          'this API does not send: it starts the '
                          'programming (deployable_program_start) and '
                          'reads its end (cyborg_lite.db.programs)',
    'attribute_create': 'a repeat would create a second attribute',
    'attribute_delete': 'a repeat of a delete that succeeded would '
                        'answer 404',
    'report_devices': "the agents' call, sent without a timeout: an "
                      'agent reports again at its next interval',
    'call_batch': 'its calls are sent again one by one, as their own '
                  'methods allow',
}

# Arguments that a repeat adds: the conductor may find the work done.
REPEAT_KWARGS = {
    'arq_bind': {'repeat': True},
    'arq_delete': {'repeat': True},
}

# Seconds between sends while the broker cannot be reached: a broker
# that is back is found at most this late.
UNDELIVERED_PAUSE = 0.2
# A timeout this close to rpc_timeout (or later) is rpc_timeout's: the
# conductor was alive and heartbeating, so the call is not lost.
_TIMEOUT_SLACK = 0.5


class FaultPolicy:
    """Runs conductor calls, trying again after a fault as the module
    says. ``timeout`` is the RPC timeout of one attempt, ``monitor`` its
    call monitor timeout, ``fault_timeout`` the bound on what a fault
    may cost a caller."""

    def __init__(self, timeout, monitor, fault_timeout, clock=time.monotonic,
                 sleep=time.sleep):
        self.timeout = timeout
        self.monitor = monitor
        self.fault_timeout = fault_timeout
        self._clock = clock
        self._sleep = sleep

    def call(self, method, kwargs, attempt, repeat_safe=True):
        """``attempt(kwargs)`` until it answers, or until the fault has
        cost ``fault_timeout``; its result, or the last attempt's
        error. ``repeat_safe`` False: a lost call is not sent again even
        if its method is in ``RETRIED`` (its form under ``[upgrade_levels]
        conductor`` lacks what makes a repeat harmless)."""
        fault_start = None
        tries = 1
        while True:
            started = self._clock()
            try:
                return attempt(kwargs)
            except oslo_messaging.MessageDeliveryFailure as exc:
                error, lost = exc, False
            except oslo_messaging.MessagingTimeout as exc:
                if not self._lost(self._clock() - started):
                    raise
                error, lost = exc, True
            now = self._clock()
            if fault_start is None:
                # A lost call was last heard of ``monitor`` seconds ago.
                fault_start = now - self.monitor if lost else started
            if lost and not repeat_safe:
                LOG.warning('Conductor call %s lost (no heartbeat for %d '
                            's); not repeated: the conductors\' RPC API '
                            'version is capped below what makes a repeat '
                            'harmless', method, self.monitor)
                raise error
            if lost and method not in RETRIED:
                LOG.warning('Conductor call %s lost (no heartbeat for %d '
                            's); not repeated: %s', method, self.monitor,
                            NOT_RETRIED.get(method, 'not safe to repeat'))
                raise error
            # The next attempt, if lost as well, is known lost at most
            # ``monitor`` seconds after it starts.
            if now + self.monitor - fault_start > self.fault_timeout:
                LOG.warning('Conductor call %s failed after %d attempt(s) '
                            'in %.1f s: %s', method, tries,
                            now - fault_start, error)
                raise error
            if lost:
                LOG.warning('Conductor call %s lost (no heartbeat for %d '
                            's); sending it again', method, self.monitor)
                kwargs = dict(kwargs, **REPEAT_KWARGS.get(method, {}))
            else:
                LOG.info('Conductor call %s not sent (%s); trying again',
                         method, error)
                self._sleep(UNDELIVERED_PAUSE)
            tries += 1

    def _lost(self, elapsed):
        """Whether a MessagingTimeout after ``elapsed`` seconds came from
        missing heartbeats, not from the RPC timeout."""
        return elapsed < self.timeout - _TIMEOUT_SLACK
