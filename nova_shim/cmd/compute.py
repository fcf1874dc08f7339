"""``nova-shim-compute``: the compute service for one or more hypervisors.

Builds the config (``--config-file``, options as nova_shim.conf lists
them), opens the libvirt connection it keeps for its life, registers a
compute-node provider in Placement per ``[compute]
hypervisor_hostnames``, serves the compute API on ``[compute]
api_host``/``api_port`` and prints its URL. Point Cyborg's ``[nova]
endpoint_override`` at that URL (plus ``/v2.1``) so that its
``accelerator-request-bound`` events arrive.
"""

import signal
import sys
import threading

from lite_common import auth as common_auth
from lite_common import logs

from nova_shim.api import auth
from nova_shim.service import ComputeService
from nova_shim.service import SchemaNotCurrent
from nova_shim import conf as shim_conf

PROGRAM = 'nova-shim-compute'


def main(argv: list[str] | None = None) -> int:
    conf = shim_conf.build_conf(sys.argv[1:] if argv is None else argv)
    logs.setup(conf, 'nova-shim', stdout_is_output=True)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        service = ComputeService(conf).start()
    except (common_auth.AuthConfigError, SchemaNotCurrent) as exc:
        return common_auth.refuse_to_start(PROGRAM, exc)
    except Exception as exc:  # noqa: BLE001 - say why, do not trace
        print('nova-shim-compute cannot start: %s: %s (check [placement], '
              '[libvirt] and [database])' % (type(exc).__name__, exc),
              file=sys.stderr)
        return 1
    auth.warn_if_open(conf, service.url)
    print('nova_shim compute API at %s/v2.1' % service.url, flush=True)
    try:
        stop.wait()
    finally:
        service.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
