"""Server side of the conductor RPC API: thin methods that hand work to
the feature modules. The version history is in
``cyborg_lite.conductor.rpcapi``."""

import inspect

import oslo_messaging

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite.conductor import batching
from cyborg_lite.conductor import db_faults
from cyborg_lite.conductor import placement
from cyborg_lite.conductor import rpcapi
from cyborg_lite.db import api as db_api
from cyborg_lite.db import inventory
from cyborg_lite.db import services

_EXPECTED = (exception.CyborgLiteException,)

DATABASE_ONLY = rpcapi.DATABASE_ONLY
_CONTEXTS = context.ContextSerializer()


@db_faults.survive_restarts
class ConductorManager:
    target = oslo_messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, db, arqs, reports, batch_pool, programs=None,
                 service_down_time=60):
        self._db = db
        self._service_down_time = service_down_time
        self._arqs = arqs
        self._reports = reports
        self._programs = programs
        # Runs calls of a call_batch that may wait on an agent beside the
        # others, so that one such call (a vGPU bind waiting for its
        # agent to create the mdev) holds no other back.
        self._batch_pool = batch_pool

    def call_batch(self, ctx, calls):
        """Run several calls, each ``{method, context, kwargs}``, and
        answer each with its result or error, in order (see
        ``cyborg_lite.conductor.batching``).

        Calls that only read or create rows (``DATABASE_ONLY``) run
        one after another in this thread, which then runs the first of
        the others; the rest of those start at once in the batch pool.
        A hand-off to a pool thread costs more than a database-only call
        of an ARQ lifecycle takes, and the message is answered when its
        slowest call is done.
        """
        here = [i for i, call in enumerate(calls)
                if call['method'] in DATABASE_ONLY]
        beside = [i for i, call in enumerate(calls)
                  if call['method'] not in DATABASE_ONLY]
        here += beside[:1]
        futures = [(i, self._batch_pool.submit(self._run_batched, calls[i]))
                   for i in beside[1:]]
        answers = [None] * len(calls)
        for i in here:
            answers[i] = self._run_batched(calls[i])
        for i, future in futures:
            answers[i] = future.result()
        return answers

    def _run_batched(self, call):
        method = call['method']
        fn = getattr(self, method, None)
        if method == 'call_batch' or method.startswith('_') or \
                not inspect.ismethod(fn):
            return {'error': {'class': 'UnsupportedVersion',
                              'message': 'No batched method %r.' % method}}
        return batching.outcome_of(
            fn, _CONTEXTS.deserialize_context(call['context']),
            **call['kwargs'])

    # device profiles
    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_profile_create(self, ctx, profile):
        return db_api.device_profile_create(
            self._db, profile['name'], profile['groups'],
            description=profile.get('description'),
            uuid=profile.get('uuid'))

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_profile_list(self, ctx, names=None):
        return db_api.device_profile_list(self._db, names)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_profile_get(self, ctx, uuid=None, name=None):
        return db_api.device_profile_get(self._db, uuid=uuid, name=name)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_profile_delete(self, ctx, uuids=(), names=()):
        db_api.device_profile_delete(self._db, uuids, names)

    # accelerator requests
    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_create(self, ctx, device_profile_name, idempotency_key=None):
        return self._arqs.create(ctx, device_profile_name,
                                 idempotency_key=idempotency_key)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_list(self, ctx, instance_uuid=None, bind_state=None):
        return self._arqs.list(ctx, instance_uuid, bind_state)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_get(self, ctx, uuid):
        return self._arqs.get(ctx, uuid)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_bind(self, ctx, bindings, repeat=False):
        self._arqs.bind(ctx, bindings, repeat=repeat)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_unbind(self, ctx, uuids):
        self._arqs.unbind(ctx, uuids)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def arq_delete(self, ctx, uuids=None, instance_uuid=None, repeat=False):
        self._arqs.delete(ctx, uuids=uuids, instance_uuid=instance_uuid,
                          repeat=repeat)

    # inventory
    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_list(self, ctx, filters):
        return inventory.device_list(self._db, **filters)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_get(self, ctx, uuid):
        return inventory.device_get(self._db, uuid)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def device_set_status(self, ctx, uuid, status):
        """Set the status, then reserve or free the inventory in
        Placement; when Placement fails, the status goes back to what
        it was (503), so that the two never disagree."""
        previous, deployables = inventory.device_set_status(
            self._db, uuid, status)
        try:
            self._reports.set_reserved(deployables, status)
        except placement.PlacementError as exc:
            inventory.device_set_status(self._db, uuid, previous)
            raise exception.ServiceUnavailable(
                reason='Placement did not take the %s inventory of device '
                       '%s (%s); the status stays %s'
                       % ('reserved' if status == 'maintaining' else 'freed',
                          uuid, exc, previous)) from None

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_list(self, ctx, filters):
        return inventory.deployable_list(self._db, **filters)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_get(self, ctx, uuid):
        return inventory.deployable_get(self._db, uuid)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_program(self, ctx, uuid, image_uuid):
        return self._programs.program(uuid, image_uuid)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_program_start(self, ctx, uuid, image_uuid, request_id):
        return self._programs.start(uuid, image_uuid, request_id)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_program_status(self, ctx, request_id):
        return self._programs.status(request_id)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def deployable_program_abandon(self, ctx, request_id):
        return self._programs.abandon(request_id)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def attribute_list(self, ctx, filters):
        return inventory.attribute_list(self._db, **filters)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def attribute_get(self, ctx, uuid):
        return inventory.attribute_get(self._db, uuid)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def attribute_create(self, ctx, values):
        return inventory.attribute_create(self._db, **values)

    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def attribute_delete(self, ctx, uuid):
        inventory.attribute_delete(self._db, uuid)

    # agents
    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def report_devices(self, ctx, hostname, devices, digest=None):
        return self._reports.report(hostname, devices, digest)

    # services
    @oslo_messaging.expected_exceptions(*_EXPECTED)
    def conductor_versions(self, ctx):
        """The conductors recorded within ``[conductor]
        service_down_time``, each ``{host, rpc_version, updated_at}``
        (what ``[upgrade_levels] conductor = auto`` reads)."""
        return services.versions(self._db, services.CONDUCTOR,
                                 self._service_down_time)
