"""What every cyborg-lite process does first: config and logging.

The console scripts (``cyborg_lite/cmd/``), the WSGI entry point
(:mod:`cyborg_lite.api.wsgi`) and the agent's :func:`run
<cyborg_lite.agent.service.run>` share these steps: parse the options
into a fresh ConfigOpts, set up oslo.log, quiet library chatter, and
serve a service until SIGTERM or SIGINT. They live here, below both the
services and ``cmd/``, so that no service module imports the
console-script layer.
"""

import logging
import os
import signal
import sys
import threading
import warnings

from oslo_log import log

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
    """Set up oslo.log; a log file whose directory does not exist ends
    the process with one line that says so (oslo.log raised a
    FileNotFoundError traceback)."""
    if conf.log_file:
        path = os.path.join(conf.log_dir or '', conf.log_file)
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise SystemExit(
                '%s: cannot write the log file %s: the directory %s does '
                'not exist (create it, or change log_file or log_dir)'
                % (os.path.basename(sys.argv[0]), path, directory))
    log.setup(conf, 'cyborg-lite')
    quiet_libraries()


def quiet_libraries():
    """Keep library chatter (eventlet deprecation, kombu's memory
    transport) out of operators' terminals."""
    warnings.filterwarnings('ignore', category=DeprecationWarning)
    warnings.filterwarnings('ignore', module='eventlet')
    for name in ('kombu', 'oslo.messaging._drivers.impl_rabbit', 'stevedore',
                 'oslo_policy'):
        logging.getLogger(name).setLevel(logging.ERROR)


def serve_until_signalled(service):
    """Start a service, wait for SIGTERM or SIGINT, then stop it."""
    service.start()
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stopped.set())
    stopped.wait()
    service.stop()
    return 0
