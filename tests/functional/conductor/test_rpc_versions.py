"""Conductors of an older release beside today's API servers.

Uncapped (an upgrade done in the wrong order), a call that needs a
conductor RPC version they do not serve is a 503 that says to upgrade
the conductors, not a 500. Capped by ``[upgrade_levels] conductor``,
every call goes in a form they serve, and what has none is a 503 that
says so. Through real RPC servers that serve an older version only
(with the older methods' signatures, so that an argument of a newer
version fails the call), over the in-process transport and (with
CYBORG_LITE_TEST_RABBIT_URL) RabbitMQ; ``auto`` through the real
conductor and its services table. The rolling upgrade with the
previous release's own conductor is in
``tests/functional/reliability/test_rolling_upgrade.py``.
"""

import concurrent.futures
import contextlib
import datetime

import os
import uuid

import oslo_messaging
import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite import local_transport
from cyborg_lite import rpc
from cyborg_lite import exception
from cyborg_lite.api import errors
from cyborg_lite.conductor import batching
from cyborg_lite.conductor import rpcapi
from cyborg_lite.conductor import version_cap
from cyborg_lite.db import models
from cyborg_lite.db import services
from tests.fixtures import cyborg_api

RABBIT_ENV = 'CYBORG_LITE_TEST_RABBIT_URL'


class _ConductorOfRelease12:
    """What an older conductor answers for: RPC API 1.2."""

    target = oslo_messaging.Target(version='1.2')

    def deployable_get(self, ctx, uuid):
        return {'uuid': uuid}


class _ConductorOfRelease11:
    """RPC API 1.1's ARQ calls and programming, with their signatures
    of that release: a newer argument is a TypeError."""

    target = oslo_messaging.Target(version='1.1')

    def __init__(self):
        self.calls = []

    def arq_create(self, ctx, device_profile_name):
        self.calls.append('arq_create')
        return [{'uuid': str(uuid.uuid4()),
                 'device_profile_name': device_profile_name}]

    def arq_bind(self, ctx, bindings):
        self.calls.append('arq_bind')

    def arq_delete(self, ctx, uuids=None, instance_uuid=None):
        self.calls.append('arq_delete')

    def deployable_program(self, ctx, uuid, image_uuid):
        self.calls.append('deployable_program')
        return {'uuid': uuid, 'image': image_uuid}

    def call_batch(self, ctx, calls):
        self.calls.append('call_batch')
        return [batching.outcome_of(getattr(self, call['method']), ctx,
                                    **call['kwargs']) for call in calls]


@contextlib.contextmanager
def _older_conductor(transport_url, endpoint, level=None, batch_size=1):
    """A client of today's release (capped at ``level``) and an RPC
    server of ``endpoint`` on a topic of their own."""
    topic = 'cyborg-lite-versions-' + uuid.uuid4().hex[:8]
    conf = cl_conf.build_conf(overrides={
        (None, 'transport_url'): transport_url,
        ('conductor', 'topic'): topic,
        ('upgrade_levels', 'conductor'): level})
    transport = rpc.get_transport(conf)
    server = rpc.get_server(transport, topic, 'old', [endpoint])
    server.start()
    try:
        yield rpcapi.ConductorAPI(conf, transport, timeout=10,
                                  batch_size=batch_size)
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


@pytest.fixture(params=['in-process', 'rabbitmq'])
def transport_url(request):
    if request.param == 'in-process':
        return local_transport.TRANSPORT_URL
    if not os.environ.get(RABBIT_ENV):
        pytest.skip('%s is not set' % RABBIT_ENV)
    return os.environ[RABBIT_ENV]


def test_a_call_an_older_conductor_does_not_serve_is_503(transport_url):
    topic = 'cyborg-lite-versions-' + uuid.uuid4().hex[:8]
    conf = cl_conf.build_conf(overrides={
        (None, 'transport_url'): transport_url,
        ('conductor', 'topic'): topic})
    transport = rpc.get_transport(conf)
    server = rpc.get_server(transport, topic, 'old',
                            [_ConductorOfRelease12()])
    server.start()
    try:
        client = rpcapi.ConductorAPI(conf, transport, timeout=10)
        ctx = context.RequestContext.admin()
        # What the older conductor serves still works.
        assert client.deployable_get(ctx, 'd') == {'uuid': 'd'}
        with pytest.raises(Exception) as raised:
            client.deployable_program_start(ctx, 'd', 'i', 'r')
        status, message = errors.status_and_message(raised.value)
        assert status == 503
        assert 'upgrade the conductors before the API servers' in message
        assert 'Traceback' not in message
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def test_capped_at_1_1_the_lifecycle_reaches_a_1_1_conductor(transport_url):
    old = _ConductorOfRelease11()
    with _older_conductor(transport_url, old, level='1.1',
                          batch_size=8) as client:
        ctx = context.RequestContext.admin()
        assert client.cap.get() == '1.1'
        [arq] = client.arq_create(ctx, 'dp')
        client.arq_bind(ctx, {arq['uuid']: {'hostname': 'h'}})
        client.arq_delete(ctx, instance_uuid='i')
        assert client.deployable_program(ctx, 'd', 'i') == {
            'uuid': 'd', 'image': 'i'}
        # Concurrent callers share call_batch messages (RPC API 1.1),
        # each call in its 1.0 form.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            created = list(pool.map(lambda _: client.arq_create(ctx, 'dp'),
                                    range(32)))
        assert len(created) == 32
        assert set(old.calls) >= {'arq_create', 'arq_bind', 'arq_delete',
                                  'deployable_program'}


def test_without_the_cap_a_1_1_conductor_refuses_the_new_forms(
        transport_url):
    with _older_conductor(transport_url, _ConductorOfRelease11()) as client:
        ctx = context.RequestContext.admin()
        with pytest.raises(Exception) as raised:
            client.arq_create(ctx, 'dp')
        assert errors.status_and_message(raised.value)[0] == 503


def test_what_the_cap_allows_no_form_of_is_503_saying_so(transport_url):
    with _older_conductor(transport_url, _ConductorOfRelease12(),
                          level='1.2') as client:
        ctx = context.RequestContext.admin()
        with pytest.raises(exception.ConductorTooOld) as raised:
            client.conductor_versions(ctx)
        status, message = errors.status_and_message(raised.value)
        assert status == 503
        assert ('conductor_versions needs conductor RPC API 1.4, and this '
                'service sends at most 1.2') in message


def test_auto_with_a_conductor_that_records_nothing(transport_url):
    with _older_conductor(transport_url, _ConductorOfRelease12(),
                          level='auto') as client:
        assert client.cap.get() == version_cap.UNRECORDED
        assert client.deployable_get(context.RequestContext.admin(),
                                     'd') == {'uuid': 'd'}


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack')) as s:
        yield s


def _auto_client(stack):
    stack.aio.conf.set_override('conductor', 'auto', group='upgrade_levels')
    try:
        return rpcapi.ConductorAPI(stack.aio.conf, stack.aio.transport,
                                   timeout=10)
    finally:
        stack.aio.conf.clear_override('conductor', group='upgrade_levels')


def test_auto_takes_the_oldest_conductor_that_recorded_lately(stack):
    db = stack.aio.db
    # The running conductor recorded itself when it started.
    hosts = {row['host']: row['rpc_version'] for row in
             services.versions(db, services.CONDUCTOR, 60)}
    assert set(hosts.values()) == {rpcapi.RPC_API_VERSION}
    assert _auto_client(stack).cap.get() == rpcapi.RPC_API_VERSION
    # A conductor of an older release, recorded a moment ago.
    services.record(db, 'older-conductor', services.CONDUCTOR, '1.2')
    try:
        client = _auto_client(stack)
        assert client.cap.get() == '1.2'
        # Its calls go in the older forms, to the real conductor.
        ctx = context.RequestContext.admin()
        assert client.arq_list(ctx) is not None
        # Gone for longer than service_down_time, it no longer counts.
        table = models.Service.__table__
        with db.writer() as session:
            session.execute(table.update().where(
                table.c.host == 'older-conductor').values(
                updated_at=datetime.datetime.utcnow() -
                datetime.timedelta(seconds=61)))
        assert _auto_client(stack).cap.get() == rpcapi.RPC_API_VERSION
    finally:
        with db.writer() as session:
            session.execute(models.Service.__table__.delete().where(
                models.Service.__table__.c.host == 'older-conductor'))
