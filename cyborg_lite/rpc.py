"""oslo.messaging plumbing shared by the RPC clients and servers.

Transports are built from the ConfigOpts passed in. In one process the
all-in-one and the tests use ``cyborg-local://`` (see
``cyborg_lite.local_transport``); separate processes use
``rabbit://``.
"""

import oslo_messaging
from oslo_messaging import opts as messaging_opts

from cyborg_lite import context

ALLOWED_EXMODS = ['cyborg_lite.exception']

RABBIT_GROUP = 'oslo_messaging_rabbit'
# cyborg-lite's defaults for oslo.messaging's RabbitMQ options. A broker
# that went away is tried every second until it is back: by default the
# pause between tries grows by 2 s up to 30 s, so conductors, agents and
# the API's reply queues came back up to half a minute after a
# restarted broker did, and every call in between was lost.
RABBIT_DEFAULTS = {'rabbit_retry_interval': 1, 'rabbit_retry_backoff': 0,
                   'rabbit_interval_max': 1}


def set_defaults(conf):
    """Apply ``RABBIT_DEFAULTS`` to ``conf`` (a configuration file
    still overrides them)."""
    if RABBIT_GROUP not in conf:
        for group, opts in messaging_opts.list_opts():
            if group == RABBIT_GROUP:
                conf.register_opts(opts, group=group)
    for name, value in RABBIT_DEFAULTS.items():
        conf.set_default(name, value, group=RABBIT_GROUP)


def get_transport(conf):
    set_defaults(conf)
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
