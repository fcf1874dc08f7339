"""cyborg-lite configuration.

Config is passed, not global: every service builds its own
``cfg.ConfigOpts`` with ``build_conf``, so several services (the
all-in-one, the tests) can live in one process.
"""

from oslo_config import cfg
from oslo_db import options as db_options
from oslo_log import log
import oslo_messaging
from oslo_messaging._metrics import client as metrics_client
from oslo_messaging._tracing import client as tracing_client
from oslo_messaging import opts as messaging_opts
from oslo_policy import opts as policy_opts

from cyborg_lite.conf import agent
from cyborg_lite.conf import api
from cyborg_lite.conf import clients
from cyborg_lite.conf import conductor
from cyborg_lite.conf import default
from cyborg_lite.conf import upgrade_levels

_MODULES = (default, api, conductor, agent, clients, upgrade_levels)

DEFAULT_SQLITE = 'sqlite:///cyborg_lite.sqlite'

# cyborg-lite's defaults for oslo.db's [database] options. The pool keeps
# 16 connections (oslo.db: 5): a conductor serves as many calls at once
# as the API threads that call it (two gunicorn workers of eight), and a
# call beyond the pool opens an overflow connection that is closed
# again when it is returned, which on PostgreSQL starts a new backend
# each time: with 5, eight clients cost PostgreSQL twice the CPU per ARQ
# lifecycle, and 32 clients four times.
DATABASE_DEFAULTS = {'connection': DEFAULT_SQLITE, 'max_pool_size': 16}


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every option cyborg-lite reads on ``conf``."""
    for module in _MODULES:
        module.register_opts(conf)
    db_options.set_defaults(conf, **DATABASE_DEFAULTS)
    oslo_messaging.set_transport_defaults('cyborg-lite')
    # oslo.messaging registers some groups (oslo_messaging_tracing,
    # oslo_messaging_metrics) only on the global CONF, but its RPC client
    # reads them from the ConfigOpts it is given: register them all here.
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf.register_opts(metrics_client.oslo_messaging_metrics,
                       group='oslo_messaging_metrics')
    conf.register_opts(tracing_client.oslo_messaging_tracing,
                       group='oslo_messaging_tracing')
    policy_opts.set_defaults(conf)


def build_conf(args=None, default_config_files=None,
               overrides=None, description=None) -> cfg.ConfigOpts:
    """A fresh, parsed ConfigOpts with every cyborg-lite option.

    ``overrides`` maps ``(group, name)`` (group None for DEFAULT) to
    values and is how the all-in-one and the tests set options without
    files. ``description`` heads a console script's ``--help``.
    """
    conf = cfg.ConfigOpts()
    log.register_options(conf)
    # Logs go to stderr (or log_file); stdout is for command output.
    conf.set_default('use_stderr', True)
    register_opts(conf)
    conf(args or [], project='cyborg-lite',
         default_config_files=default_config_files or [],
         description=description)
    for (group, name), value in (overrides or {}).items():
        conf.set_override(name, value, group=group)
    return conf
