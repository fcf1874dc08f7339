"""``cyborg-lite-conductor``: the RPC server that owns the database."""

import signal
import sys
import threading

from cyborg_lite import rpc
from cyborg_lite.cmd import common
from cyborg_lite.conductor import service


def main(argv=None):
    conf = common.setup(sys.argv[1:] if argv is None else argv)
    conductor = service.ConductorService(conf, rpc.get_transport(conf))
    conductor.start()
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stopped.set())
    stopped.wait()
    conductor.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
