"""WSGI entry point for gunicorn or uwsgi::

    gunicorn -w 2 'cyborg_lite.api.wsgi:application'

The config files come from ``CYBORG_LITE_CONFIG_FILES`` (comma-separated;
default ``/etc/cyborg-lite/cyborg-lite.conf`` when it exists).

Importing this module does nothing: the server's first look at
``application`` (gunicorn's worker when it boots, after the fork; do not
``--preload``) builds the app. A configuration that cannot serve
(authentication that lacks its credentials, a log file in a missing
directory) refuses to load, with one line: gunicorn prints it and stops
(its status for an application that cannot load, 4), rather than
serving every request an error.
"""

import os
import warnings

from lite_common import auth as common_auth
from lite_common import wsgi_entry

# As the console scripts do (cyborg_lite.cmd): hide oslo.service's
# warning that eventlet, which cyborg-lite never uses, is deprecated.
warnings.filterwarnings('ignore', module='oslo_service')

from cyborg_lite import process  # noqa: E402
from cyborg_lite.api import auth  # noqa: E402

DEFAULT_CONFIG = '/etc/cyborg-lite/cyborg-lite.conf'
PROGRAM = 'cyborg-lite-api'


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


def init_application():
    """The API app of the configuration; the error of
    ``lite_common.auth.wsgi_load_error`` if it cannot serve."""
    conf = common_auth.built_or_refused(
        PROGRAM, lambda: process.setup(_config_args()))

    def build():
        # After the set-up, which quiets the libraries the app loads.
        from cyborg_lite.api import app
        return app.setup_app(conf)
    application = common_auth.built_or_refused(PROGRAM, build)
    auth.warn_if_open(conf, 'this WSGI server (pid %d)' % os.getpid())
    return application


# PEP 562: ``application`` is built on the server's first look.
__getattr__ = wsgi_entry.built_on_first_look(globals(), init_application)
