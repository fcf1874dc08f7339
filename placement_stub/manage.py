"""``placement-stub-manage``: the stub's database, as ``placement-manage``.

    placement-stub-manage --config-file placement-stub.conf db sync

``db sync`` runs the migrations and adds the standard resource classes
and traits (os-resource-classes, os-traits). Run it once before starting
several processes of the stub (gunicorn workers) with ``[placement]
sync_on_startup = false``: processes that migrate a fresh database at
the same time fail on each other's rows.
"""

import sys

from oslo_config import cfg
import sqlalchemy as sa

from lite_common import logs
from placement_stub import conf as conf_lib
from placement_stub.db import api as db_api


def _sync(conf):
    db_api.sync(db_api.create_facade(conf))
    url = sa.engine.make_url(conf.placement_database.connection)
    print('placement-stub database %s: schema and standard names in '
          'place.' % url.render_as_string(hide_password=True))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = cfg.ConfigOpts()
    conf_lib.register_opts(conf)

    def add_commands(subparsers):
        db = subparsers.add_parser('db', help='the database')
        db_commands = db.add_subparsers(dest='db_command', required=True)
        sync = db_commands.add_parser(
            'sync', help='migrate, then add the standard resource classes '
                         'and traits')
        sync.set_defaults(run=_sync)

    conf.register_cli_opt(cfg.SubCommandOpt(
        'command', title='commands', handler=add_commands))
    conf(argv, project='placement-stub',
         description='The placement stub\'s database.')
    logs.setup(conf, 'placement-stub', stdout_is_output=True)
    return conf.command.run(conf)


if __name__ == '__main__':
    sys.exit(main())
