"""``cyborg-lite-dbsync``: database schema upgrade, version and stamp."""

import argparse
import sys

from cyborg_lite import process
from cyborg_lite.db import engine
from cyborg_lite.db import migration


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog='cyborg-lite-dbsync')
    parser.add_argument('--config-file', action='append', default=[],
                        help='configuration file (repeatable)')
    parser.add_argument('--config-dir', action='append', default=[],
                        help='directory of *.conf files, read after the '
                             'files (repeatable), as the services take it')
    parser.add_argument('--debug', '-d', action='store_true',
                        help='log at DEBUG level')
    parser.add_argument('--log-file', help='log to this file')
    sub = parser.add_subparsers(dest='command', required=True)
    up = sub.add_parser('upgrade', help='upgrade the schema')
    up.add_argument('revision', nargs='?', default='head')
    sub.add_parser('version', help='print the schema revision')
    st = sub.add_parser('stamp', help='record a revision without '
                                      'running migrations')
    st.add_argument('revision', nargs='?', default='head')
    args = parser.parse_args(argv)
    oslo_args = [a for path in args.config_file
                 for a in ('--config-file', path)]
    oslo_args += [a for path in args.config_dir
                  for a in ('--config-dir', path)]
    if args.debug:
        oslo_args.append('--debug')
    if args.log_file:
        oslo_args += ['--log-file', args.log_file]
    conf = process.setup(oslo_args)
    print('cyborg-lite-dbsync: database %s%s' % (
        engine.shown_url(conf.database.connection),
        '' if args.config_file or args.config_dir else
        ' (no --config-file: the default, in the current directory)'),
        file=sys.stderr)
    db = engine.Database(conf)
    try:
        if args.command == 'upgrade':
            migration.upgrade(db, args.revision)
            print('Database is at %s' % migration.version(db))
            return 0
        if args.command == 'stamp':
            migration.stamp(db, args.revision)
            print('Database stamped at %s' % migration.version(db))
            return 0
    except migration.NewerSchema as exc:
        print('cyborg-lite-dbsync: %s' % exc, file=sys.stderr)
        return 1
    current = migration.version(db)
    if current is not None and not migration.known(current):
        print('%s (newer than this cyborg-lite, whose newest is %s)'
              % (current, migration.head()))
    else:
        print(migration.version(db) or
              "No schema: the database is empty (run 'cyborg-lite-dbsync "
              "upgrade').")
    return 0


if __name__ == '__main__':
    sys.exit(main())
