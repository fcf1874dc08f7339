"""oslo.messaging plumbing shared by the RPC clients and servers.

Transports are built from the ConfigOpts passed in. In one process the
all-in-one and the tests use ``kombu+cyborg-memory:////`` (the real
rabbit driver on an in-memory broker, see
:mod:`cyborg_lite.memory_transport`); separate processes use
``rabbit://``.
"""

import oslo_messaging

from cyborg_lite import context
from cyborg_lite import memory_transport

ALLOWED_EXMODS = ['cyborg_lite.exception']


def get_transport(conf):
    if memory_transport.SCHEME in (conf.transport_url or ''):
        memory_transport.register()
    return oslo_messaging.get_rpc_transport(
        conf, allowed_remote_exmods=ALLOWED_EXMODS)


def get_client(transport, topic, version, server=None, timeout=None):
    target = oslo_messaging.Target(topic=topic, version=version,
                                   server=server)
    return oslo_messaging.get_rpc_client(
        transport, target, serializer=context.ContextSerializer(),
        timeout=timeout)


def get_server(transport, topic, server, endpoints):
    target = oslo_messaging.Target(topic=topic, server=server)
    return oslo_messaging.get_rpc_server(
        transport, target, endpoints,
        serializer=context.ContextSerializer())
