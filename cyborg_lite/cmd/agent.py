"""``cyborg-lite-agent``: the per-host agent.

``--discover-only`` runs the enabled drivers once and prints what they
find as JSON, which is how an operator checks a host's configuration.
Without it the agent service runs (``cyborg_lite.agent.service.run``).
"""

from __future__ import annotations

import argparse
import os
import sys

from cyborg_lite.agent import discover as discover_mod
from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite import conf as conf_mod
from cyborg_lite import privsep
from cyborg_lite import process


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """Our own flags; the rest (``--config-file`` ...) go to oslo.config."""
    parser = argparse.ArgumentParser(
        prog='cyborg-lite-agent',
        epilog='oslo.config options such as --config-file and '
               '--config-dir are accepted too.')
    parser.add_argument('--discover-only', action='store_true',
                        help='print the devices the drivers find and exit')
    parser.add_argument('--sysfs-root',
                        help='read this tree instead of [agent] sysfs_root')
    return parser.parse_known_args(argv)


def main(argv: list[str] | None = None) -> int:
    args, rest = parse_args(sys.argv[1:] if argv is None else argv)
    overrides = {}
    if args.sysfs_root:
        overrides[('agent', 'sysfs_root')] = args.sysfs_root
    conf = conf_mod.build_conf(rest, overrides=overrides)
    if not os.path.isdir(conf.agent.sysfs_root):
        print('cyborg-lite-agent: the sysfs root %s is not a directory '
              '(--sysfs-root or [agent] sysfs_root)' % conf.agent.sysfs_root,
              file=sys.stderr)
        return 2
    if not args.discover_only:
        # oslo.log as the other services set it up ([DEFAULT] log_file,
        # debug, use_stderr); --discover-only prints JSON only.
        process.setup_logging(conf)
        # Its privileged actions run in oslo.privsep daemons, started
        # through [agent] root_helper with the agent's own files.
        privsep.configure_daemons(conf)
        # The service module is the long-running agent (RPC server and
        # periodic report); it is imported only when it is needed.
        from cyborg_lite.agent import service
        return service.run(conf) or 0
    hostname = base.host_name(conf)
    try:
        devices = discover_mod.discover(conf, hostname=hostname)
    except (base.DriverError, SysfsError) as exc:
        print('cyborg-lite-agent: %s' % exc, file=sys.stderr)
        return 1
    print(discover_mod.render_json(hostname, devices))
    return 0


if __name__ == '__main__':
    sys.exit(main())
