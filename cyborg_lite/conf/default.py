"""Options of the [DEFAULT] group shared by every cyborg-lite service."""

from oslo_config import cfg

OPTS = [
    cfg.StrOpt('host', sample_default='<hostname>',
               help='Name of this host. The agent listens for RPC with '
                    'server=<host>; it must equal the hostname that Nova '
                    'puts in bind requests. Defaults to the FQDN.'),
    cfg.StrOpt('state_path', default='/var/lib/cyborg-lite',
               help='Where services keep state (the SQLite file and '
                    'logs of the all-in-one).'),
]


def register_opts(conf):
    conf.register_opts(OPTS)


def list_opts():
    return {'DEFAULT': OPTS}
