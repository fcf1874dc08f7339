"""WSGI entry point for gunicorn or uwsgi::

    gunicorn -w 2 'cyborg_lite.api.wsgi:application'

The config files come from ``CYBORG_LITE_CONFIG_FILES`` (comma-separated;
default ``/etc/cyborg-lite/cyborg-lite.conf`` when it exists). The app is
built on first use, in each worker, after the fork.
"""

import logging
import os
import threading

from cyborg_lite import process
from cyborg_lite.api import app
from cyborg_lite.api import auth
from cyborg_lite.api import errors

LOG = logging.getLogger(__name__)

DEFAULT_CONFIG = '/etc/cyborg-lite/cyborg-lite.conf'
_lock = threading.Lock()
_app = None


def _config_args():
    files = os.environ.get('CYBORG_LITE_CONFIG_FILES')
    if files:
        paths = [f for f in files.split(',') if f]
    else:
        paths = [DEFAULT_CONFIG] if os.path.exists(DEFAULT_CONFIG) else []
    args = []
    for path in paths:
        args += ['--config-file', path]
    return args


def _get_app():
    global _app
    with _lock:
        if _app is None:
            conf = process.setup(_config_args())
            try:
                _app = app.setup_app(conf)
            except auth.AuthConfigError as exc:
                # A worker cannot refuse to start from here: it answers
                # every request 503 saying why, and logs it once.
                LOG.error('The API cannot serve: %s', exc)
                _app = errors.error_response(
                    503, 'This API server cannot authenticate callers: %s '
                    'Fix the configuration and restart it.' % exc)
            else:
                auth.warn_if_open(conf, 'this WSGI server (pid %d)'
                                  % os.getpid())
    return _app


def application(environ, start_response):
    return _get_app()(environ, start_response)
