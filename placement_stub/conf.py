"""Configuration of the placement stub.

Config is passed, never global: ``build_conf`` returns a private
``cfg.ConfigOpts`` per application, so several stubs (and other services)
can live in one process.
"""

import copy

from oslo_config import cfg
from oslo_db import options as db_options
from oslo_middleware import cors
from oslo_policy import opts as policy_opts

from lite_common import auth as common_auth
from lite_common import logs

API_GROUP = 'api'
DB_GROUP = 'placement_database'
DEFAULT_SQLITE = 'sqlite:///placement_stub.sqlite'
# Looked up in the configuration directories; the rules' defaults apply
# where there is none.
DEFAULT_POLICY_FILE = 'policy.yaml'

API_OPTS = [
    *common_auth.strategy_opts(
        'noauth2', 'identity from X-Project-Id, X-User-Id and X-Roles '
        'headers, or a "user:project" token', '/etc/placement-stub/htpasswd',
        ['reader'], 'the placement stub'),
    cfg.StrOpt('host', default='127.0.0.1',
               help='Address placement-stub-api listens on.'),
    cfg.PortOpt('port', default=8778,
                help='Port placement-stub-api listens on (0 picks one).'),
]

# Placement's project and user of a consumer whose allocations were
# written before 1.8, without them.
INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

PLACEMENT_OPTS = [
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Run the database migrations and add the standard '
                     'resource classes and traits when the app starts. '
                     'Off by default, as in Placement: several processes '
                     '(gunicorn workers) that migrate a fresh database at '
                     'once fail on each other\'s rows; run '
                     'placement-stub-manage db sync first. The all-in-one '
                     'turns it on for its own database.'),
    cfg.StrOpt('incomplete_consumer_project_id',
               default=INCOMPLETE_CONSUMER_ID,
               help='Project of a consumer whose allocations were written '
                    'before microversion 1.8 without one, as in '
                    'Placement.'),
    cfg.StrOpt('incomplete_consumer_user_id',
               default=INCOMPLETE_CONSUMER_ID,
               help='User of a consumer whose allocations were written '
                    'before microversion 1.8 without one, as in '
                    'Placement.'),
]


def _db_opts():
    return copy.deepcopy(db_options.database_opts)


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every option the stub reads on ``conf``: its own,
    oslo.log's, the database's, ``[oslo_policy]`` and ``[cors]``."""
    conf.register_opts(API_OPTS, group=API_GROUP)
    logs.register_options(conf)
    policy_opts.set_defaults(conf, policy_file=DEFAULT_POLICY_FILE)
    conf.register_opts(copy.deepcopy(cors.CORS_OPTS), group='cors')
    conf.register_opts(PLACEMENT_OPTS, group='placement')
    conf.register_opts(_db_opts(), group=DB_GROUP)
    conf.set_default('connection', DEFAULT_SQLITE, group=DB_GROUP)


def build_conf(args=None, default_config_files=None,
               overrides=None) -> cfg.ConfigOpts:
    """A fresh, parsed ConfigOpts with every option of the stub.

    ``overrides`` maps ``(group, name)`` (group None for DEFAULT) to values.
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(args if args is not None else [], project='placement-stub',
         default_config_files=default_config_files or [])
    for (group, name), value in (overrides or {}).items():
        conf.set_override(name, value, group=group)
    return conf


def list_opts():
    """Options for oslo-config-generator."""
    return [
        (API_GROUP, API_OPTS),
        ('placement', PLACEMENT_OPTS),
        (DB_GROUP, _db_opts()),
        ('cors', copy.deepcopy(cors.CORS_OPTS)),
    ]
