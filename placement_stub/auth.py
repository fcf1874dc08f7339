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
  (``placement_stub.deploy.noauth_identity``).

The strategies are shared with the other services
(``lite_common.auth``): one that lacks what it needs stops the stub
at start-up with one line (``AuthConfigError``).
"""

import webob.exc

from lite_common import auth as common_auth

SERVICE = 'placement-stub'
CONF_FILE = 'placement-stub.conf'
# The version document needs no credentials, as in Placement.
PUBLIC_PATHS = ('', '/')
OPEN_STRATEGY = 'noauth2'


def unauthorized(environ, start_response):
    """Placement's 401, in its JSON error format."""
    environ['HTTP_ACCEPT'] = 'application/json'
    resp = webob.exc.HTTPUnauthorized(json_formatter=_json_error)
    return resp(environ, start_response)


def _json_error(body, status, title, environ):
    return {'errors': [{'status': int(status.split()[0]), 'title': title,
                        'detail': 'The request you have made requires '
                                  'authentication.'}]}


def wrap(app, conf):
    """The configured authentication around ``app``; AuthConfigError
    when it lacks what it needs."""
    if conf.api.auth_strategy == OPEN_STRATEGY:
        return app
    return common_auth.authenticate(app, conf, realm=SERVICE,
                                    public_paths=PUBLIC_PATHS,
                                    unauthorized=unauthorized)


def warn_if_open(conf, url, stream=None):
    """Log and print on ``stream`` (stderr by default) one WARNING line
    when the stub at ``url`` serves anonymous callers (``noauth2``);
    return the line, or None when it authenticates them."""
    return common_auth.warn_if_open(conf, SERVICE, url, CONF_FILE,
                                    OPEN_STRATEGY, stream=stream)
