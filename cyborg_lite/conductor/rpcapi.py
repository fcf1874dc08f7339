"""Client side of the conductor RPC API.

API version history:

* 1.0 - Initial version: device profiles, ARQs (create, list, get, bind,
  unbind, delete), devices, deployables, attributes, report_devices.
* 1.1 - call_batch: several calls, each with its own context, in one
  message (see ``cyborg_lite.conductor.batching``).
* 1.2 - arq_create takes an idempotency_key, arq_bind and arq_delete a
  repeat flag, so that a call lost with its conductor can be sent again
  (see ``cyborg_lite.conductor.retries``).
* 1.3 - deployable_program_start, deployable_program_status and
  deployable_program_abandon: the API starts an FPGA's programming and
  reads its end, instead of waiting on one call (see
  ``ConductorAPI.deployable_program``). The conductor still serves
  1.0's deployable_program for API servers not upgraded yet.
* 1.4 - conductor_versions: the versions that the running conductors
  recorded, for ``[upgrade_levels] conductor = auto`` (see
  ``cyborg_lite.conductor.version_cap``).

Every call names the version it needs; payloads are plain dicts. Below
the cap of ``[upgrade_levels] conductor`` a call goes in its older form
(``cyborg_lite.conductor.version_cap``). A test
keeps this class and ``cyborg_lite.conductor.manager.ConductorManager``
in step.
"""

import time

import kombu.exceptions
import oslo_messaging
from oslo_utils import uuidutils

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite import rpc
from cyborg_lite import states
from cyborg_lite.agent import rpcapi as agent_rpcapi
from cyborg_lite.conductor import batching
from cyborg_lite.conductor import retries
from cyborg_lite.conductor import version_cap

RPC_API_VERSION = '1.4'
# Methods that only read or create rows: never waiting on an agent or on
# Placement, a conductor answers them in about a millisecond.
DATABASE_ONLY = frozenset({
    'arq_create', 'arq_list', 'arq_get', 'device_profile_list',
    'device_profile_get', 'device_list', 'device_get', 'deployable_list',
    'deployable_get', 'attribute_list', 'attribute_get',
    'deployable_program_status', 'conductor_versions'})
# Writes of one short transaction: sent as quick calls, their messages
# expire with the call monitor timeout, so that one the API gave up on
# (503) is not run later by a conductor that comes back. (A programming's
# start records the request and leaves the programming to a thread.)
QUICK_WRITES = frozenset({
    'device_profile_create', 'device_profile_delete', 'attribute_create',
    'attribute_delete', 'deployable_program_start',
    'deployable_program_abandon'})
# Of those reads, the lists whose cost grows with the whole table: on a large
# or busy database one may take seconds, so they go with heartbeats
# (an ARQ list of one instance, Nova's, stays quick).
UNBOUNDED_LISTS = frozenset({
    'arq_list', 'device_profile_list', 'device_list', 'deployable_list',
    'attribute_list'})
# Calls that may wait on a slow Placement (a device's status, whose
# inventory Placement must take): each goes in a message of its own, so
# that no call batched with it waits for it.
UNBATCHED = frozenset({'device_set_status'})
# The version each call needs, where it is not 1.0. A call_batch may
# carry any call.
VERSIONS = {'call_batch': '1.2', 'arq_create': '1.2', 'arq_bind': '1.2',
            'arq_delete': '1.2', 'deployable_program_start': '1.3',
            'deployable_program_status': '1.3',
            'deployable_program_abandon': '1.3',
            'conductor_versions': version_cap.RECORDING}
# Reconnection attempts of a send with a timeout (see ConductorAPI):
# none, so that a lost broker is a 503 in bounded time.
PUBLISH_RETRIES = 0
# Seconds between two readings of a programming under way: from the
# first to the last, doubling.
PROGRAM_POLL_FIRST = 0.02
PROGRAM_POLL_LAST = 0.5
_CONTEXTS = context.ContextSerializer()


def quick(method, kwargs):
    """Whether a call (or every call of a call_batch) is answered in
    milliseconds: in ``DATABASE_ONLY`` but not a list of a whole
    table (``UNBOUNDED_LISTS``), or in ``QUICK_WRITES``. Such
    calls go without heartbeats, and their messages expire when their
    caller stops waiting."""
    if method == 'call_batch':
        return all(quick(call.get('method'), call.get('kwargs') or {})
                   for call in kwargs.get('calls') or ())
    if method == 'arq_list' and kwargs.get('instance_uuid'):
        return True
    if method in QUICK_WRITES:
        return True
    return method in DATABASE_ONLY and method not in UNBOUNDED_LISTS


class ConductorAPI:
    """Calls to the conductors; any of them may answer."""

    def __init__(self, conf, transport, timeout=None, batch_size=1,
                 call_monitor_timeout=None, fault_timeout=None):
        self.topic = conf.conductor.topic
        self._timeout = timeout
        # How long a programming may last: as long as a conductor waits
        # for its agent, and an RPC timeout more for the conductor's
        # own work.
        self._program_bound = (conf.agent.fpga_program_timeout +
                               agent_rpcapi.PROGRAM_MONITOR_TIMEOUT +
                               (timeout or conf.api.rpc_timeout))
        self.client = rpc.get_client(transport, self.topic, RPC_API_VERSION,
                                     timeout=timeout)
        self.cap = version_cap.VersionCap(
            conf.upgrade_levels.conductor, RPC_API_VERSION, VERSIONS,
            self._conductor_versions)
        # A caller that gives a timeout (the API) also hears within
        # seconds that a call is lost with its conductor or its broker,
        # and sends it again where that is safe (see retries): a call
        # that may wait on an agent or Placement is sent with a call
        # monitor timeout, and the conductor's heartbeats keep it going
        # for as long as it works; a database-only call has no answer
        # within that time only when it is lost. The values come from
        # [api] unless given.
        self._monitor = None
        self._faults = None
        if timeout:
            monitor = (conf.api.rpc_call_monitor_timeout
                       if call_monitor_timeout is None
                       else call_monitor_timeout)
            if monitor and monitor < timeout:
                self._monitor = monitor
                self._faults = retries.FaultPolicy(
                    timeout, monitor, conf.api.rpc_fault_timeout
                    if fault_timeout is None else fault_timeout)
        # The timeout bounds only the wait for a reply: sending retries a
        # lost broker forever by default. A caller that gives a timeout
        # (the API) must answer in bounded time, so a send that finds the
        # broker gone fails after its one connection attempt with
        # MessageDeliveryFailure (503 at the API); the next call connects
        # again.
        self._retry = PUBLISH_RETRIES if timeout else None
        # With batch_size > 1, calls that queue up in this process share
        # messages (call_batch).
        self._batcher = None
        if batch_size > 1:
            self._batcher = batching.CallBatcher(
                self._send, self._send_batch, max_size=batch_size,
                alone=UNBATCHED)

    def _call(self, ctx, method, **kwargs):
        if self._faults is None:
            return self._attempt(ctx, method, kwargs)
        return self._faults.call(
            method, kwargs, lambda kw: self._attempt(ctx, method, kw),
            repeat_safe=self.cap.repeat_safe(method))

    def _attempt(self, ctx, method, kwargs):
        if self._batcher is not None and version_cap.at_most(
                VERSIONS['call_batch'], self.cap.get()):
            return self._batcher.call(ctx, method, kwargs)
        return self._send(ctx, method, kwargs)

    def _conductor_versions(self):
        # Sent as it is, for the cap: never batched, never repeated.
        return self.client.prepare(
            version=VERSIONS['conductor_versions'], retry=self._retry,
            timeout=self._monitor or self._timeout).call(
            context.RequestContext.admin(), 'conductor_versions')

    def _send(self, ctx, method, kwargs):
        version, kwargs = self.cap.form(method, kwargs)
        options = {}
        if self._monitor is not None:
            if quick(method, kwargs):
                # Heartbeats cost the conductor a thread per message
                # (about a tenth of its CPU in an ARQ lifecycle); a call
                # that cannot run long needs none.
                options['timeout'] = self._monitor
            else:
                options['call_monitor_timeout'] = self._monitor
        try:
            if method == 'deployable_program':
                # RPC API 1.0's programming in one call, under a cap
                # below 1.3: it may last as long as a programming.
                options['timeout'] = self._program_bound
            return self.client.prepare(
                version=version, retry=self._retry,
                **options).call(ctx, method, **kwargs)
        except kombu.exceptions.OperationalError as exc:
            # oslo.messaging lets kombu's error escape when its pool opens
            # a new connection to a broker that is away and the call may
            # not retry: a delivery failure like any other (503 at the
            # API).
            raise oslo_messaging.MessageDeliveryFailure(str(exc)) from exc

    def _send_batch(self, calls):
        return self.call_batch(calls[0][0], [
            {'method': method, 'context': _CONTEXTS.serialize_context(ctx),
             'kwargs': kwargs}
            for ctx, method, kwargs in calls])

    def call_batch(self, ctx, calls):
        return self._send(ctx, 'call_batch', {'calls': calls})

    # device profiles
    def device_profile_create(self, ctx, profile):
        return self._call(ctx, 'device_profile_create', profile=profile)

    def device_profile_list(self, ctx, names=None):
        return self._call(ctx, 'device_profile_list', names=names)

    def device_profile_get(self, ctx, uuid=None, name=None):
        return self._call(ctx, 'device_profile_get', uuid=uuid, name=name)

    def device_profile_delete(self, ctx, uuids=(), names=()):
        return self._call(ctx, 'device_profile_delete', uuids=list(uuids),
                          names=list(names))

    # accelerator requests
    def arq_create(self, ctx, device_profile_name, idempotency_key=None):
        # Picked here, once, so that every attempt carries the same key.
        return self._call(ctx, 'arq_create',
                          device_profile_name=device_profile_name,
                          idempotency_key=(idempotency_key or
                                           uuidutils.generate_uuid()))

    def arq_list(self, ctx, instance_uuid=None, bind_state=None):
        return self._call(ctx, 'arq_list', instance_uuid=instance_uuid,
                          bind_state=bind_state)

    def arq_get(self, ctx, uuid):
        return self._call(ctx, 'arq_get', uuid=uuid)

    def arq_bind(self, ctx, bindings, repeat=False):
        return self._call(ctx, 'arq_bind', bindings=bindings, repeat=repeat)

    def arq_unbind(self, ctx, uuids):
        return self._call(ctx, 'arq_unbind', uuids=list(uuids))

    def arq_delete(self, ctx, uuids=None, instance_uuid=None, repeat=False):
        return self._call(ctx, 'arq_delete',
                          uuids=None if uuids is None else list(uuids),
                          instance_uuid=instance_uuid, repeat=repeat)

    # inventory
    def device_list(self, ctx, filters):
        return self._call(ctx, 'device_list', filters=filters)

    def device_get(self, ctx, uuid):
        return self._call(ctx, 'device_get', uuid=uuid)

    def device_set_status(self, ctx, uuid, status):
        return self._call(ctx, 'device_set_status', uuid=uuid, status=status)

    def deployable_list(self, ctx, filters):
        return self._call(ctx, 'deployable_list', filters=filters)

    def deployable_get(self, ctx, uuid):
        return self._call(ctx, 'deployable_get', uuid=uuid)

    def deployable_program(self, ctx, uuid, image_uuid):
        """Program an FPGA deployable; the deployable once programmed.

        Not RPC API 1.0's one call, which waited on the conductor for
        the whole programming: a conductor starts the programming and
        runs it in a thread (deployable_program_start, a quick call),
        and this reads the request until it ends (see
        ``cyborg_lite.db.programs``). So a programming may last as
        long as the agent lets its tool run, whatever ``[api]
        rpc_timeout``; a conductor lost mid-programming is known within
        seconds (its beats stop); and a request that no conductor took
        is given up, so that none programs it later.
        """
        if not version_cap.at_most(VERSIONS['deployable_program_start'],
                                   self.cap.get()):
            return self._call(ctx, 'deployable_program', uuid=uuid,
                              image_uuid=image_uuid)
        request_id = uuidutils.generate_uuid()
        started = time.monotonic()
        try:
            self.deployable_program_start(ctx, uuid, image_uuid, request_id)
        except (oslo_messaging.MessagingTimeout,
                oslo_messaging.MessageDeliveryFailure) as exc:
            # Taken by a conductor or not: the first of this and the
            # conductor to write the request decides.
            try:
                state = self._attempt(ctx, 'deployable_program_abandon',
                                      {'request_id': request_id})
            except (oslo_messaging.MessagingTimeout,
                    oslo_messaging.MessageDeliveryFailure):
                raise exc from None
            if state == states.PROGRAM_ABANDONED:
                raise exception.ProgrammingNotStarted(
                    uuid=uuid,
                    seconds=round(time.monotonic() - started)) from None
        return self._wait_for_programming(ctx, uuid, image_uuid,
                                          request_id, started)

    def _wait_for_programming(self, ctx, uuid, image_uuid, request_id,
                              started):
        lost_after = max(self._monitor or 0, 3 * states.PROGRAM_BEAT_INTERVAL)
        pause = PROGRAM_POLL_FIRST
        beats, heard = None, time.monotonic()
        while True:
            time.sleep(pause)
            pause = min(2 * pause, PROGRAM_POLL_LAST)
            found = self.deployable_program_status(ctx, request_id)
            if found['state'] == states.PROGRAMMED:
                return self.deployable_get(ctx, uuid)
            if found['state'] == states.PROGRAM_FAILED:
                raise exception.ProgrammingFailed(reason=found['error'])
            now = time.monotonic()
            if found['beats'] != beats:
                beats, heard = found['beats'], now
            elif now - heard > lost_after:
                raise exception.ProgrammingLost(
                    uuid=uuid, seconds=round(now - heard),
                    image_uuid=image_uuid)
            if now - started > self._program_bound:
                raise oslo_messaging.MessagingTimeout(
                    'The programming of deployable %s did not end within '
                    '%d s.' % (uuid, self._program_bound))

    def deployable_program_start(self, ctx, uuid, image_uuid, request_id):
        return self._call(ctx, 'deployable_program_start', uuid=uuid,
                          image_uuid=image_uuid, request_id=request_id)

    def deployable_program_status(self, ctx, request_id):
        return self._call(ctx, 'deployable_program_status',
                          request_id=request_id)

    def deployable_program_abandon(self, ctx, request_id):
        return self._call(ctx, 'deployable_program_abandon',
                          request_id=request_id)

    def attribute_list(self, ctx, filters):
        return self._call(ctx, 'attribute_list', filters=filters)

    def attribute_get(self, ctx, uuid):
        return self._call(ctx, 'attribute_get', uuid=uuid)

    def attribute_create(self, ctx, values):
        return self._call(ctx, 'attribute_create', values=values)

    def attribute_delete(self, ctx, uuid):
        return self._call(ctx, 'attribute_delete', uuid=uuid)

    def conductor_versions(self, ctx):
        return self._call(ctx, 'conductor_versions')

    # agents
    def report_devices(self, ctx, hostname, devices, digest):
        return self._call(ctx, 'report_devices', hostname=hostname,
                          devices=devices, digest=digest)
