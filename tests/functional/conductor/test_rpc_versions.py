"""An API server newer than its conductors (an upgrade done in the wrong
order): a call that needs a conductor RPC version they do not serve is a
503 that says to upgrade the conductors, not a 500. Through a real RPC
server that serves version 1.2 only, over the in-process transport and
(with CYBORG_LITE_TEST_RABBIT_URL) RabbitMQ."""

import os
import uuid

import oslo_messaging
import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite import local_transport
from cyborg_lite import rpc
from cyborg_lite.api import errors
from cyborg_lite.conductor import rpcapi

RABBIT_ENV = 'CYBORG_LITE_TEST_RABBIT_URL'


class _ConductorOfRelease12:
    """What an older conductor answers for: RPC API 1.2."""

    target = oslo_messaging.Target(version='1.2')

    def deployable_get(self, ctx, uuid):
        return {'uuid': uuid}


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
