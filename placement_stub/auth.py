"""Authentication of the placement stub, as Placement's.

* ``keystone`` (the default): keystonemiddleware's ``auth_token``
  (``[keystone_authtoken]``) everywhere but the version document at
  ``/``;
* ``http_basic``: oslo.middleware checks the user and its bcrypt hash
  in an htpasswd file (``[api] http_basic_auth_user_file``), and the
  rest of the identity comes from ``[api] http_basic_identity_file``:
  YAML mapping a user name to ``project_id``, ``user_id`` and ``roles``
  (the format the other services read). A user missing from it gets
  ``[api] http_basic_default_roles``. Placement only lets ``admin`` or
  ``service`` through, so the services' users need one of those roles;
* ``noauth2``: identity from the request's headers
  (:func:`placement_stub.deploy.noauth_identity`).

The strategies are shared with the other services
(:mod:`lite_common.auth`): one that lacks what it needs stops the stub
at start-up with one line (:class:`~lite_common.auth.AuthConfigError`).
"""

import webob.exc

from lite_common import auth as common_auth
from lite_common import identity_file

SERVICE = 'placement-stub'
CONF_FILE = 'placement-stub.conf'
# The version document needs no credentials, as in Placement.
PUBLIC_PATHS = ('', '/')


def load_identities(path):
    """The users of the identity file, checked as the other services
    check theirs (:func:`lite_common.identity_file.read`)."""
    return identity_file.read(path) if path else {}


def _unauthorized(environ, start_response):
    environ['HTTP_ACCEPT'] = 'application/json'
    resp = webob.exc.HTTPUnauthorized(json_formatter=_json_error)
    return resp(environ, start_response)


def _json_error(body, status, title, environ):
    return {'errors': [{'status': int(status.split()[0]), 'title': title,
                        'detail': 'The request you have made requires '
                                  'authentication.'}]}


class BasicAuth(common_auth.BasicAuth):
    """Basic auth everywhere but the version document at ``/``."""

    def __init__(self, app, conf):
        identities = common_auth.IdentityMap.load(
            conf.api.http_basic_identity_file,
            conf.api.http_basic_default_roles)
        super().__init__(app, conf.api.http_basic_auth_user_file,
                         identities, realm=SERVICE,
                         unauthorized=_unauthorized)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '/') in PUBLIC_PATHS:
            return self.app(environ, start_response)
        return super().__call__(environ, start_response)


def wrap(app, conf):
    """The configured authentication around ``app``; AuthConfigError
    when it lacks what it needs."""
    strategy = conf.api.auth_strategy
    if strategy == 'keystone':
        return common_auth.PublicPathBypass(
            common_auth.keystone_auth_token(app, conf), app, PUBLIC_PATHS)
    if strategy == 'http_basic':
        return BasicAuth(app, conf)
    return app


def warn_if_open(conf, url, stream=None):
    """Log and print on ``stream`` (stderr by default) one WARNING line
    when the stub at ``url`` serves anonymous callers (``noauth2``);
    return the line, or None when it authenticates them."""
    return common_auth.warn_if_open(conf, SERVICE, url, CONF_FILE,
                                    'noauth2', stream=stream)
