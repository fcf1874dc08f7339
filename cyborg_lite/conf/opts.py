"""Entry points for oslo-config-generator (``tox -e genconfig``)."""

from oslo_config import cfg
from oslo_db import options as db_options

from cyborg_lite.conf import _MODULES
from cyborg_lite.conf import DATABASE_DEFAULTS
from cyborg_lite import privsep


def list_opts():
    groups = {}
    for module in _MODULES:
        for group, opts in module.list_opts().items():
            groups.setdefault(group, []).extend(opts)
    # The agent's privsep daemons (oslo.privsep's options, one section
    # each).
    for group, opts in privsep.list_opts():
        groups.setdefault(group, []).extend(opts)
    return sorted(groups.items())


def set_library_defaults():
    """Show cyborg-lite's defaults for library options in the sample
    (``oslo.config.opts.defaults``): the generator lists oslo.db's
    options with oslo.db's own defaults otherwise."""
    cfg.set_defaults(db_options.database_opts, **DATABASE_DEFAULTS)
