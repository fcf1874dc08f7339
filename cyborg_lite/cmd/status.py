"""``cyborg-lite-status``: checks to run before and after an upgrade.

``cyborg-lite-status --config-file /etc/cyborg-lite/cyborg-lite.conf
upgrade check`` prints a table of results (oslo.upgradecheck) and exits
0 (all good), 1 (warnings) or 2 (failures); 255 means a check crashed.

The checks:

* **Database schema**: ``[database] connection`` is reachable and its
  schema is at the newest migration (``cyborg-lite-dbsync upgrade``).
* **Policy file**: when ``[oslo_policy] policy_file`` exists, it parses,
  is YAML rather than deprecated JSON, and names no rules that are
  unknown or deprecated.
"""

import sys

from oslo_config import cfg
from oslo_log import log
from oslo_upgradecheck import upgradecheck
from oslo_utils import fileutils

from cyborg_lite import conf as cl_conf
from cyborg_lite import policies
from cyborg_lite import process
from cyborg_lite.db import engine
from cyborg_lite.db import migration

Code = upgradecheck.Code
Result = upgradecheck.Result


class Checks(upgradecheck.UpgradeCommands):
    """The upgrade checks of cyborg-lite, on one ConfigOpts."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def _check_database(self) -> Result:
        result = self._check_schema()
        where = engine.shown_url(self.conf.database.connection)
        if self.conf.config_file:
            return Result(result.code, 'Database %s: %s' % (
                where, result.details))
        return Result(result.code, 'Database %s (the default: no '
                      '--config-file): %s' % (where, result.details))

    def _check_schema(self) -> Result:
        # Fail fast: an unreachable database is the answer, not a wait.
        self.conf.set_override('max_retries', 0, group='database')
        try:
            db = engine.Database(self.conf)
        except Exception as exc:  # noqa: BLE001 - report, do not trace
            return Result(Code.FAILURE, 'Cannot connect to [database] '
                          'connection: %s' % _first_line(exc))
        try:
            current = migration.version(db)
        except Exception as exc:  # noqa: BLE001
            return Result(Code.FAILURE, 'Cannot read the schema version: %s'
                          % _first_line(exc))
        finally:
            db.dispose()
        head = migration.head()
        if current is None:
            return Result(Code.FAILURE, 'The database has no schema. Run '
                          '"cyborg-lite-dbsync upgrade".')
        if not migration.known(current):
            return Result(Code.FAILURE, str(migration.NewerSchema(current)))
        if current != head:
            return Result(Code.FAILURE, 'The schema is at %s, not at %s. '
                          'Run "cyborg-lite-dbsync upgrade".'
                          % (current, head))
        return Result(Code.SUCCESS, 'Schema at %s.' % head)

    def _check_policy(self) -> Result:
        path = self.conf.find_file(self.conf.oslo_policy.policy_file)
        if not path:
            return Result(Code.SUCCESS, 'No policy file: the defaults apply.')
        enforcer = policies.get_enforcer(self.conf)
        try:
            enforcer.load_rules(force_reload=True)
        except Exception as exc:  # noqa: BLE001
            return Result(Code.FAILURE, 'Policy file %s does not parse: %s'
                          % (path, _first_line(exc)))
        problems = _policy_problems(enforcer)
        if fileutils.is_json(path):
            problems.insert(0, 'it is JSON, which is deprecated: convert it '
                               'with oslopolicy-convert-json-to-yaml')
        if problems:
            return Result(Code.WARNING, 'Policy file %s: %s.'
                          % (path, '; '.join(problems)))
        return Result(Code.SUCCESS, 'Policy file %s parses.' % path)

    # (name, callable) pairs; oslo.upgradecheck runs them in this order.
    _upgrade_checks = (
        ('Database schema', _check_database),
        ('Policy file', _check_policy),
    )


def _policy_problems(enforcer) -> list[str]:
    """Rules in the file that no default knows, or that are deprecated."""
    rules = policies.list_rules()
    known = {r.name for r in rules}
    deprecated = {r.deprecated_rule.name: r.name for r in rules
                  if getattr(r, 'deprecated_rule', None) is not None}
    problems = []
    for name in sorted(enforcer.file_rules):
        if name in deprecated:
            problems.append('rule %s is deprecated, use %s'
                            % (name, deprecated[name]))
        elif name not in known:
            problems.append('rule %s is unknown' % name)
    return problems


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


DESCRIPTION = ('cyborg-lite-status: whether this deployment is ready to '
               'run (database schema at head, policy file rules known).')


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if '-h' in argv or '--help' in argv:
        # oslo.upgradecheck's parser has no description of its own.
        print(DESCRIPTION + '\n')
    conf = cfg.ConfigOpts()
    log.register_options(conf)
    cl_conf.register_opts(conf)
    process.quiet_libraries()
    return upgradecheck.main(conf, 'cyborg-lite', Checks(conf),
                             argv=argv,
                             default_config_files=[])


if __name__ == '__main__':
    sys.exit(main())
