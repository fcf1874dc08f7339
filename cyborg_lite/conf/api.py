"""Options of the [api] group: the HTTP front end."""

from oslo_config import cfg

from lite_common import auth as common_auth

GROUP = 'api'

OPTS = [
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help='Address the built-in API server listens on.'),
    cfg.PortOpt('port', default=6666,
                help='Port the built-in API server listens on.'),
    cfg.StrOpt('public_endpoint',
               help='Base URL used in resource links, for example '
                    'https://cloud.example.com. Defaults to the request '
                    'host URL.'),
    *common_auth.strategy_opts(
        'noauth', 'identity from X-Project-Id, X-User-Id, X-Roles and '
        'X-Service-Roles headers', '/etc/cyborg-lite/htpasswd',
        ['member', 'reader'], 'the API'),
    cfg.ListOpt('noauth_default_roles', default=['admin', 'member', 'reader'],
                help='With noauth, the roles of a request that sends no '
                     'X-Roles header.'),
    cfg.StrOpt('noauth_default_project', default='admin',
               help='With noauth, the project of a request that sends no '
                    'X-Project-Id header.'),
    cfg.ListOpt('service_token_roles', default=['service'],
                help='Roles of a service token that allow binding, '
                     'unbinding and deleting bound ARQs.'),
    cfg.StrOpt('healthcheck_disable_file',
               default='/etc/cyborg-lite/healthcheck_disable',
               help='While this file exists, /healthcheck answers 503 so '
                    'that a load balancer drains this API server.'),
    cfg.IntOpt('rpc_timeout', default=30, min=1,
               help='Seconds the API waits for the conductor before it '
                    'answers 503.'),
    cfg.IntOpt('rpc_batch_size', default=16, min=1,
               help='Most calls to the conductor that this API process '
                    'sends in one message when calls queue up behind '
                    'one that waits for its reply; 1 sends every call '
                    'on its own.'),
    cfg.IntOpt('max_request_body_size', default=114688, min=1024,
               help='Largest request body accepted, in bytes; larger '
                    'bodies get 413.'),
    cfg.IntOpt('rpc_call_monitor_timeout', default=3, min=2,
               help='Seconds after which the API takes a call to the '
                    'conductor for lost with its conductor or the '
                    'broker. A call that may wait on an agent or '
                    'Placement gets a heartbeat from its conductor every '
                    'half of this while it runs, so it has rpc_timeout '
                    'however long it works, and is lost this long after '
                    'its last heartbeat; a database-only call, answered '
                    'in milliseconds, is lost when it has no answer '
                    'after this long.'),
    cfg.IntOpt('rpc_fault_timeout', default=9, min=2,
               help='Seconds a fault may cost a caller: a call lost with '
                    'its conductor, or one that could not be sent '
                    'because the broker is away, is tried again while an '
                    'answer can still come within this many seconds of '
                    'the fault (calls safe to repeat, see '
                    'cyborg_lite.conductor.retries), and is answered 503 '
                    'otherwise.'),
]


def default(name):
    """The default of one ``[api]`` option."""
    return next(opt.default for opt in OPTS if opt.name == name)


def register_opts(conf):
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    return {GROUP: OPTS}
