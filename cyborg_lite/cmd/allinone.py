"""``cyborg-lite-allinone``: every service in one process, on embedded
defaults (SQLite, in-process messaging, noauth, simulated hosts).

It serves the cyborg-lite API, Placement, the compute API, an Image API
and Identity's version documents on their usual ports (6666, 8778, 8774,
9292, 5000; each option takes 0 for a free one), writes ``clouds.yaml``
into the state directory (one cloud, ``cyborg-lite``, for the OpenStack
clients), prints the URLs and the line that uses that cloud, and serves
until interrupted; with
``--demo`` it walks accelerated guests through their life over HTTP and
exits. The stack (and its open-access warnings) comes from
``cyborg_lite.allinone``, the composition root: this module imports
neither ``placement_stub`` nor ``nova_shim``.
"""

import argparse
import errno
import logging
import os
import signal
import sys
import threading

from cyborg_lite import allinone
from cyborg_lite import demo
from cyborg_lite import process
from cyborg_lite.agent import simulation

LOG = logging.getLogger(__name__)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='cyborg-lite-allinone',
        description='Run cyborg-lite in one process on embedded defaults.')
    parser.add_argument('--api-port', type=int, default=6666,
                        help='port of the API (0 picks a free one)')
    parser.add_argument('--api-host', default='127.0.0.1',
                        help='the address every server listens on')
    parser.add_argument('--compute-port', type=int, default=8774,
                        help='port of the compute API (0 picks a free one)')
    parser.add_argument('--placement-port', type=int, default=8778,
                        help='port of Placement (0 picks a free one)')
    parser.add_argument('--image-port', type=int, default=9292,
                        help='port of the Image API (0 picks a free one)')
    parser.add_argument('--identity-port', type=int, default=5000,
                        help='port of the Identity version documents that '
                             'some clients check (0 picks a free one)')
    parser.add_argument('--state-dir',
                        default=os.path.join(os.getcwd(), 'state'),
                        help='where the SQLite file and the log go')
    parser.add_argument('--hosts', default='fake,t4-vgpu,a100,t4-vgpu',
                        help='simulated hosts, one agent each: a number '
                             '(the kinds in turn) or a comma-separated list '
                             'of kinds (%s)' % ', '.join(
                                 allinone.HOST_KINDS))
    parser.add_argument('--demo', action='store_true',
                        help='boot accelerated guests through their life, '
                             'print each step, and exit')
    parser.add_argument('--debug', action='store_true')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    process.quiet_libraries()
    os.makedirs(args.state_dir, exist_ok=True)
    log_file = os.path.join(args.state_dir, 'cyborg-lite.log')
    overrides = {(None, 'log_file'): log_file, (None, 'debug'): args.debug,
                 (None, 'use_stderr'): False}
    kinds = args.hosts.split(',')
    if args.hosts.isdigit():
        # N hosts take the kinds in turn: fake, t4-vgpu, a100, fake...
        kinds = [allinone.HOST_KINDS[n % len(allinone.HOST_KINDS)]
                 for n in range(int(args.hosts))]
    try:
        stack = allinone.AllInOne(
            args.state_dir, api_port=args.api_port, host_kinds=kinds,
            api_host=args.api_host, overrides=overrides, compute=True,
            compute_port=args.compute_port,
            placement_port=args.placement_port, image_port=args.image_port,
            identity_port=args.identity_port)
    except OSError as exc:
        print('cyborg-lite-allinone: %s' % _start_failure(exc, args),
              file=sys.stderr, flush=True)
        return 1
    process.setup_logging(stack.conf)
    try:
        stack.start()
    except Exception as exc:
        LOG.exception('The all-in-one could not start')
        stack.stop()
        print('cyborg-lite-allinone: %s (log: %s)' % (
            _start_failure(exc, args), log_file), file=sys.stderr,
            flush=True)
        return 1
    print('cyborg-lite API: %s/v2  (log: %s)' % (stack.url, log_file),
          flush=True)
    print('Placement: %s' % stack.placement_url, flush=True)
    print('Compute (nova-shim --url): %s' % stack.compute.url, flush=True)
    print('Images: %s' % stack.images.url, flush=True)
    print(clouds_usage(stack.write_clouds_yaml()), flush=True)
    print('Hosts: %s' % ', '.join('%s (%s)' % pair for pair in zip(
        stack.hostnames, kinds, strict=True)), flush=True)
    stack.warn_if_open()
    try:
        if args.demo:
            faults = {}
            if kinds.count('t4-vgpu') >= 2:  # to reschedule and evacuate
                faults = {'break_host': lambda h: stack.simulated_sysfs(
                              h).fail_mdev_creation(),
                          'repair_host': lambda h: stack.simulated_sysfs(
                              h).repair()}
            ok = demo.GuestDemo(stack.url, stack.compute.url,
                                stack.placement_url,
                                lambda: _count_mdevs(stack), **faults).run()
            return 0 if ok else 1
        stopped = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *a: stopped.set())
        stopped.wait()
        return 0
    finally:
        stack.stop()


def clouds_usage(path):
    """The line that tells how to use the all-in-one's cloud."""
    return 'OpenStack clients: %s' % allinone.clouds.usage(path)


def _start_failure(exc, args):
    """What failed at start-up and what to do, in one line."""
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return ('%s is in use: choose other ports with --api-port, '
                '--compute-port, --placement-port, --image-port and '
                '--identity-port (0 picks a free one)'
                % exc.strerror.rpartition(': ')[2])
    if isinstance(exc, OSError) and exc.errno == errno.EADDRNOTAVAIL:
        return ('%s is not an address of this machine: choose another '
                'with --api-host' % args.api_host)
    return 'could not start: %s: %s' % (type(exc).__name__, exc)


def _count_mdevs(stack):
    return sum(len(simulation.mdevs(stack.sysfs_root(h)))
               for h in stack.hostnames if stack.sysfs_root(h))


if __name__ == '__main__':
    sys.exit(main())
