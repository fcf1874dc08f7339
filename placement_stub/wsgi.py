"""WSGI entry point for gunicorn, uwsgi or mod_wsgi.

``application`` is built on first use from ``placement-stub.conf`` (or
the files named in ``PLACEMENT_STUB_CONFIG_FILES``, comma separated).
"""

import os

from placement_stub import auth
from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import request_body

_APP = None


def _config_files():
    env = os.environ.get('PLACEMENT_STUB_CONFIG_FILES')
    if env:
        return [f for f in env.split(',') if f]
    default = '/etc/placement-stub/placement-stub.conf'
    return [default] if os.path.exists(default) else []


def init_application():
    conf = conf_lib.build_conf(default_config_files=_config_files())
    # gunicorn's sync and gthread workers let the app read the body from
    # the client's socket: read it first, with a time limit.
    app = request_body.ReadBody(deploy.deploy(conf))
    deploy.freeze_startup_heap()
    auth.warn_if_open(conf, 'this WSGI server (pid %d)' % os.getpid())
    return app


def application(environ, start_response):
    """Build the app lazily so importing this module has no side effects."""
    global _APP
    if _APP is None:
        _APP = init_application()
    return _APP(environ, start_response)
