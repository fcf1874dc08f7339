"""``nova-shim-manage``: nova_shim's database, as ``nova-manage``.

    nova-shim-manage --config-file nova-shim.conf db sync
    nova-shim-manage --config-file nova-shim.conf db version

``db sync`` runs the migrations (adopting a database that an older
release made without them); run it before ``nova-shim-compute``, which
refuses to serve on a schema that is not the newest (unless ``[database]
sync_on_startup``). ``db version`` prints the migration the database is
at, or ``None``.
"""

import sys

from oslo_config import cfg
import sqlalchemy as sa

from lite_common import logs

from nova_shim import conf as shim_conf
from nova_shim.db import api as db_api
from nova_shim.db import migration


def _database(conf):
    return db_api.Database(db_api.connection_url(conf))


def _sync(conf) -> int:
    database = _database(conf)
    try:
        migration.upgrade(database.engine)
        url = database.engine.url.render_as_string(hide_password=True)
    finally:
        database.dispose()
    print('nova-shim database %s: at %s.' % (url, migration.head()))
    return 0


def _version(conf) -> int:
    database = _database(conf)
    try:
        print(migration.version(database.engine))
    finally:
        database.dispose()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv

    def add_commands(subparsers):
        db = subparsers.add_parser('db', help='the database')
        commands = db.add_subparsers(dest='db_command', required=True)
        commands.add_parser('sync', help='run the migrations').set_defaults(
            run=_sync)
        commands.add_parser('version', help='the migration the database '
                            'is at').set_defaults(run=_version)

    conf = cfg.ConfigOpts()
    shim_conf.register_opts(conf)
    conf.register_cli_opt(cfg.SubCommandOpt(
        'command', title='commands', handler=add_commands))
    conf(argv, project='nova-shim',
         description="nova_shim's database.")
    logs.setup(conf, 'nova-shim', stdout_is_output=True)
    try:
        return conf.command.run(conf)
    except sa.exc.SQLAlchemyError as exc:
        print('nova-shim-manage: the database cannot be reached or '
              'migrated: %s' % exc.__class__.__name__ + ': ' +
              str(exc).splitlines()[0], file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
