"""WSGI entry point for gunicorn, uwsgi or mod_wsgi.

``application`` is built from ``placement-stub.conf`` (or the files named
in ``PLACEMENT_STUB_CONFIG_FILES``, comma separated) on the server's
first look at it (gunicorn's worker when it boots, after the fork), so
that importing this module does nothing. A configuration whose
authentication cannot work refuses to load, with one line (gunicorn
prints it and stops), rather than answering every request 500.
"""

import os

from lite_common import auth as common_auth
from lite_common import logs
from lite_common import wsgi_entry

from placement_stub import auth
from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import request_body

PROGRAM = 'placement-stub'


def _config_files():
    env = os.environ.get('PLACEMENT_STUB_CONFIG_FILES')
    if env:
        return [f for f in env.split(',') if f]
    default = '/etc/placement-stub/placement-stub.conf'
    return [default] if os.path.exists(default) else []


def init_application():
    conf = conf_lib.build_conf(default_config_files=_config_files())

    def build():
        logs.setup(conf, 'placement-stub')
        return deploy.deploy(conf)
    app = common_auth.built_or_refused(PROGRAM, build)
    # gunicorn's sync and gthread workers let the app read the body from
    # the client's socket: read it first, with a time limit.
    app = request_body.ReadBody(app)
    deploy.freeze_startup_heap()
    auth.warn_if_open(conf, 'this WSGI server (pid %d)' % os.getpid())
    return app


# PEP 562: ``application`` is built on the server's first look.
__getattr__ = wsgi_entry.built_on_first_look(globals(), init_application)
