"""Options of the [conductor] group."""

from oslo_config import cfg

GROUP = 'conductor'

OPTS = [
    cfg.StrOpt('topic', default='cyborg-lite-conductor',
               help='RPC topic the conductors share.'),
    cfg.IntOpt('bind_timeout', default=60, min=1,
               help='Seconds an ARQ may stay BindStarted without its '
                    'conductor marking it as worked on before a sweep '
                    'takes its bind over: does its host work again and '
                    'finishes it (Bound), or fails it (BindFailed, its '
                    'handle released) when that work fails.'),
    cfg.IntOpt('sweep_interval', default=30, min=1,
               help='Seconds between sweeps for stuck binds.'),
    cfg.IntOpt('bind_retries', default=5, min=1,
               help='How often a bind retries after losing a race for an '
                    'attach handle.'),
    cfg.IntOpt('report_interval', default=10, min=1,
               help='Seconds between two records of a conductor in the '
                    'services table (its host, RPC API version and the '
                    'time), which "[upgrade_levels] conductor = auto" '
                    'reads.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='Seconds after its last record that a conductor is '
                    'taken for gone, and its version no longer counts '
                    'for "[upgrade_levels] conductor = auto".'),
]


def register_opts(conf):
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    return {GROUP: OPTS}
