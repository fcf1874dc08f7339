"""The all-in-one as a system under test: one process, printing its URL.

    python -m benchmarks.allinone_server --state-dir DIR --handles 512

It runs ``cyborg_lite.allinone.AllInOne`` with one simulated host
whose fake FPGA has ``--handles`` attach handles, prints ``URL <url>``
and serves until SIGTERM. ``--http-server cheroot`` (or ``wsgiref``)
serves the API with another of the candidates of
``benchmarks.http_servers`` instead of the built-in server.
"""

import argparse
import signal
import threading

from cyborg_lite import allinone
from cyborg_lite import process
from cyborg_lite.conf import api as api_conf


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--handles', type=int, default=512)
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--database')
    parser.add_argument('--http-server', default='builtin')
    parser.add_argument('--rpc-batch-size', type=int,
                        default=api_conf.default('rpc_batch_size'))
    args = parser.parse_args(argv)
    process.quiet_libraries()
    overrides = {('agent', 'fake_fpga_handles'): args.handles,
                 ('api', 'rpc_batch_size'): args.rpc_batch_size,
                 (None, 'log_file'): args.state_dir + '/cyborg-lite.log',
                 (None, 'use_stderr'): False}
    if args.database:
        overrides[('database', 'connection')] = args.database
    stack = allinone.AllInOne(args.state_dir, api_port=args.port,
                              overrides=overrides)
    process.setup_logging(stack.conf)
    stack.start()
    if args.http_server != 'builtin':
        from benchmarks import http_servers
        app = stack.api_server.app
        stack.api_server.stop()
        stack.api_server = http_servers.IN_PROCESS[args.http_server](
            app, stack.api_host, 0).start()
    print('URL %s' % stack.url, flush=True)
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stopped.set())
    stopped.wait()
    stack.stop()


if __name__ == '__main__':
    main()
