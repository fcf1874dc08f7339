"""Logging of every service, by oslo.log, set up the same way.

Each service registers oslo.log's options on its own ``ConfigOpts``
(``log_file``, ``log_dir``, ``debug``, ``use_journal``, ``use_json``,
``logging_context_format_string``, ...) and calls ``setup`` once
its options are parsed. A ``log_file`` in a directory that does not
exist ends the process with one line that says so (oslo.log raises a
FileNotFoundError with a traceback).
"""

import logging
import os
import sys
import warnings

from oslo_log import log

# Library chatter kept out of operators' terminals.
QUIET_LOGGERS = ('kombu', 'oslo.messaging._drivers.impl_rabbit',
                 'stevedore', 'oslo_policy')


def register_options(conf) -> None:
    """oslo.log's options on ``conf`` (before it parses)."""
    log.register_options(conf)


def setup(conf, project: str, stdout_is_output: bool = False) -> None:
    """Set up oslo.log for ``project`` from ``conf``; SystemExit with
    one line when ``log_file`` names a missing directory. A console
    script whose standard output is what it prints (the URL it serves)
    says so with ``stdout_is_output``: its logs then go to stderr where
    oslo.log would write them to stdout (no log file, journal or
    syslog)."""
    if stdout_is_output and not (conf.log_file or conf.use_journal or
                                 conf.use_syslog):
        conf.set_override('use_stderr', True)
    if conf.log_file:
        path = os.path.join(conf.log_dir or '', conf.log_file)
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise SystemExit(
                '%s: cannot write the log file %s: the directory %s does '
                'not exist (create it, or change log_file or log_dir)'
                % (os.path.basename(sys.argv[0]), path, directory))
    log.setup(conf, project)
    quiet_libraries()


def quiet_libraries() -> None:
    """Keep library chatter (eventlet deprecation, kombu's memory
    transport) out of operators' terminals."""
    warnings.filterwarnings('ignore', category=DeprecationWarning)
    warnings.filterwarnings('ignore', module='eventlet')
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
