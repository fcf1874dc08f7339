"""What every cyborg-lite process does first: config and logging.

The console scripts (``cyborg_lite/cmd/``), the WSGI entry point
(``cyborg_lite.api.wsgi``) and the agent's ``run`` share these steps:
parse the options into a fresh ConfigOpts, set up oslo.log, quiet
library chatter, and serve a service until SIGTERM or SIGINT. They
live here, below both the services and ``cmd/``, so that no service
module imports the console-script layer.
"""

import signal
import threading

from lite_common import logs

from cyborg_lite import conf as cl_conf


def setup(argv, description=None, overrides=None):
    """Parse ``argv`` (``--config-file``, ``--config-dir`` and oslo.log
    options) into a fresh ConfigOpts and set up logging; ``description``
    heads ``--help``."""
    conf = cl_conf.build_conf(args=argv, overrides=overrides,
                              description=description)
    setup_logging(conf)
    return conf


def setup_logging(conf):
    """Set up oslo.log (``lite_common.logs.setup``): a log file
    whose directory does not exist ends the process with one line."""
    logs.setup(conf, 'cyborg-lite')


def quiet_libraries():
    """Keep library chatter out of operators' terminals."""
    logs.quiet_libraries()


def serve_until_signalled(service):
    """Start a service, wait for SIGTERM or SIGINT, then stop it."""
    service.start()
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stopped.set())
    stopped.wait()
    service.stop()
    return 0
