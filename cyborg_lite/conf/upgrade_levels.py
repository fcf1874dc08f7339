"""Options of the [upgrade_levels] group: the newest RPC API version
each service's clients may send during a rolling upgrade, as Nova's
group of the same name."""

from oslo_config import cfg

GROUP = 'upgrade_levels'
# A version, or "auto".
LEVEL_PATTERN = r'^(auto|[0-9]+\.[0-9]+)$'
AUTO = 'auto'

OPTS = [
    cfg.StrOpt('conductor', regex=LEVEL_PATTERN,
               help='The newest conductor RPC API version that the API '
                    'servers and agents send: a version such as "1.3", '
                    'or "auto" for the oldest version that the running '
                    'conductors recorded in the database (read once by '
                    'each process, so raise it by restarting the API '
                    'servers). Unset: the version of this release. Set '
                    'it to the old release\'s version before a rolling '
                    'upgrade, when the conductors are replaced one at '
                    'a time; calls are then sent in the older form, and '
                    'what the older conductors cannot serve is answered '
                    '503 until the cap rises.'),
]


def register_opts(conf):
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    return {GROUP: OPTS}
