"""HTTP basic authentication for the placement stub.

oslo.middleware checks the user and its bcrypt hash in an htpasswd file
(``[api] http_basic_auth_user_file``). Its ``BasicAuthMiddleware`` reads
the file name from the global ``cfg.CONF`` and sets only ``X-User`` and
``X-User-Name``, so this module calls its functions with our file and
sets the rest of the identity from ``[api] http_basic_identity_file``:
YAML mapping a user name to ``project_id``, ``user_id`` and ``roles``
(the same format as cyborg-lite's). A user missing from it gets
``[api] http_basic_default_roles``. Placement only lets ``admin`` or
``service`` through, so the services' users need one of those roles.
"""

import logging
import sys

from oslo_middleware import basic_auth
import webob.exc

from lite_common import htpasswd
from lite_common import identity_file

LOG = logging.getLogger(__name__)
IDENTITY_HEADERS = ('HTTP_X_PROJECT_ID', 'HTTP_X_USER_ID', 'HTTP_X_ROLES',
                    'HTTP_X_SERVICE_ROLES', 'HTTP_X_USER',
                    'HTTP_X_USER_NAME')


def load_identities(path):
    """The users of the identity file, checked as cyborg-lite checks
    its own (:func:`lite_common.identity_file.read`)."""
    return identity_file.read(path) if path else {}


class BasicAuth:
    """Basic auth everywhere but the version document at ``/``."""

    def __init__(self, app, conf):
        self.app = app
        self.user_file = conf.api.http_basic_auth_user_file
        basic_auth.validate_auth_file(self.user_file)
        self.identities = load_identities(conf.api.http_basic_identity_file)
        self.default_roles = list(conf.api.http_basic_default_roles)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '/') in ('', '/'):
            return self.app(environ, start_response)
        for name in IDENTITY_HEADERS:
            environ.pop(name, None)
        try:
            username, password = basic_auth.parse_token(
                basic_auth.parse_header(environ))
            htpasswd.authenticate(self.user_file, username, password)
        except (webob.exc.HTTPBadRequest, webob.exc.HTTPUnauthorized,
                ValueError) as exc:
            # ValueError: bcrypt refuses a password over 72 bytes.
            LOG.info('Basic auth failed: %s', exc)
            resp = webob.exc.HTTPUnauthorized(
                json_formatter=_json_error,
                headers=[('WWW-Authenticate',
                          'Basic realm="placement-stub"')])
            environ['HTTP_ACCEPT'] = 'application/json'
            return resp(environ, start_response)
        entry = self.identities.get(username) or {}
        environ.update({
            'HTTP_X_USER_ID': str(entry.get('user_id', username)),
            'HTTP_X_PROJECT_ID': str(entry.get('project_id', username)),
            # Never empty: an absent X-Roles means admin in noauth2.
            'HTTP_X_ROLES': ','.join(entry.get('roles', self.default_roles))
            or 'none',
        })
        return self.app(environ, start_response)


def _json_error(body, status, title, environ):
    return {'errors': [{'status': int(status.split()[0]), 'title': title,
                        'detail': 'The request you have made requires '
                                  'authentication.'}]}


def warn_if_open(conf, url, stream=None):
    """Log and print on ``stream`` (stderr by default) one WARNING line
    when the stub at ``url`` serves anonymous callers (``noauth2``);
    return the line, or None when it authenticates them."""
    if conf.api.auth_strategy != 'noauth2':
        return None
    line = ('WARNING: placement-stub at %s is open: [api] auth_strategy = '
            'noauth2 serves any caller, as admin when it sends no X-Roles. '
            'To close it, set [api] auth_strategy = keystone (or '
            'http_basic) in placement-stub.conf, or listen on a loopback '
            'address only.' % url)
    LOG.warning(line)
    print(line, file=stream or sys.stderr, flush=True)
    return line
