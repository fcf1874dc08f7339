"""Authentication of the compute API, and the context of each request.

``[api] auth_strategy``, with the names and behaviour of the other two
services (``lite_common.auth``):

* ``keystone`` (the default, as Nova): keystonemiddleware's
  ``auth_token`` validates the token with ``[keystone_authtoken]``'s
  service user and sets the identity headers from it (any the client
  sent are removed); a valid ``X-Service-Token`` adds the service's
  roles (``X-Service-Roles``);
* ``http_basic``: an htpasswd file, and an identity file for projects
  and roles (identity headers the client sent are removed);
* ``noauth2`` (Nova's former name): open. Identity comes from the
  headers keystonemiddleware would set (``X-User-Id``, ``X-Project-Id``,
  ``X-Roles``, ``X-Service-Roles``), else from a token ``user:project``
  as Nova's noauth2 read it (the user ``admin`` is an admin); a caller
  that names a project and no roles is a member, and one that names
  nobody (no identity header, no token or keystoneauth's ``notused``)
  is the admin, in project ``admin``, as in the placement stub.
  Start-up says it is open.

The version documents (``/``, ``/v2``, ``/v2.1``), ``/healthcheck`` and
``/openapi.yaml`` need no credentials, so that keystoneauth's discovery
and load balancers work. Every other request gets a
``RequestContext`` whose ``is_admin`` is the
policy rule ``context_is_admin``, and whose ``can`` asks the policy.
"""

import json

from lite_common import auth as common_auth

from nova_shim.context import RequestContext
from nova_shim import exception

SERVICE = "nova_shim's compute API"
CONF_FILE = 'nova-shim.conf'
OPEN_STRATEGY = 'noauth2'
PUBLIC_PATHS = frozenset({'', '/', '/v2', '/v2/', '/v2.1', '/v2.1/',
                          '/healthcheck', '/healthcheck/', '/openapi.yaml',
                          '/v2.1/openapi.yaml'})
# What keystoneauth's ``none`` plugin sends as its token.
NOAUTH_PLACEHOLDER_TOKEN = 'notused'
NOAUTH2_ADMIN_ROLES = ['admin', 'member', 'reader']
NOAUTH2_ROLES = ['member', 'reader']
# The user and project of a noauth2 caller that names nobody.
NOAUTH2_ANONYMOUS = 'admin'
# The headers by which a noauth2 caller names who it is.
NOAUTH2_IDENTITY = ('HTTP_X_USER_ID', 'HTTP_X_PROJECT_ID', 'HTTP_X_TENANT_ID',
                    'HTTP_X_ROLES', 'HTTP_X_DOMAIN_ID',
                    'HTTP_OPENSTACK_SYSTEM_SCOPE')
# The length of the instance table's project_id and user_id columns.
MAX_ID_LENGTH = 255


class WithoutIdentity:
    """Removes identity headers before ``app`` (the public paths, which
    skip the auth middleware that would remove them)."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        for name in common_auth.IDENTITY_HEADERS:
            environ.pop(name, None)
        return self.app(environ, start_response)


def wrap(app, conf):
    """The configured authentication around ``app``;
    AuthConfigError when it lacks what it needs."""
    if conf.api.auth_strategy == OPEN_STRATEGY:
        return app
    return common_auth.authenticate(
        app, conf, realm='nova-shim', public_paths=PUBLIC_PATHS,
        public_app=WithoutIdentity(app), unauthorized=_unauthorized)


def _unauthorized(environ, start_response):
    body = json.dumps({'unauthorized': {
        'code': 401, 'message': 'The request you have made requires '
                                'authentication.'}}).encode()
    start_response('401 Unauthorized', [
        ('Content-Type', 'application/json'),
        ('Content-Length', str(len(body)))])
    return [body]


def _noauth2_values(environ) -> dict:
    """What noauth2 adds to the identity headers: the identity of a
    ``user:project`` token where they name none, the admin's for a
    caller that names nobody (keystoneauth's ``none`` plugin), and
    default roles."""
    token = environ.get('HTTP_X_AUTH_TOKEN') or ''
    if token == NOAUTH_PLACEHOLDER_TOKEN:
        token = ''
    user, _sep, project = token.partition(':')
    values = {}
    if user:
        admin = user == 'admin'
        if not environ.get('HTTP_X_USER_ID'):
            values['user_id'] = user
        if not (environ.get('HTTP_X_PROJECT_ID') or
                environ.get('HTTP_X_TENANT_ID')):
            values['project_id'] = project or user
    else:
        admin = not any(environ.get(name) is not None
                        for name in NOAUTH2_IDENTITY)
        if admin:
            values.update(user_id=NOAUTH2_ANONYMOUS,
                          project_id=NOAUTH2_ANONYMOUS)
    if 'HTTP_X_ROLES' not in environ:
        values['roles'] = list(NOAUTH2_ADMIN_ROLES if admin
                               else NOAUTH2_ROLES)
    return values


def _service_catalog(environ) -> list:
    raw = environ.get('HTTP_X_SERVICE_CATALOG')
    if not raw:
        return []
    try:
        catalog = json.loads(raw)
    except ValueError as exc:
        raise exception.InvalidRequest(
            reason='X-Service-Catalog is not JSON') from exc
    if not isinstance(catalog, list):
        raise exception.InvalidRequest(
            reason='X-Service-Catalog is not a list')
    return catalog


def context_from_environ(environ, conf, enforcer) -> RequestContext:
    """The caller's context: identity from the headers that the auth
    middleware set (and, in noauth2, the client); InvalidRequest (400)
    for an identity longer than the database keeps or a malformed
    catalog."""
    values = (_noauth2_values(environ)
              if conf.api.auth_strategy == OPEN_STRATEGY else {})
    ctx = RequestContext.from_environ(
        environ, service_catalog=_service_catalog(environ),
        enforcer=enforcer, **values)
    project_header = ('X-Project-Id' if environ.get('HTTP_X_PROJECT_ID')
                      else 'X-Tenant-Id')
    for name, header in (('user_id', 'X-User-Id'),
                         ('project_id', project_header)):
        if len(getattr(ctx, name) or '') > MAX_ID_LENGTH:
            raise exception.InvalidRequest(
                reason='the %s (%s) is longer than %d characters'
                % (name.replace('_id', ''), header, MAX_ID_LENGTH))
    ctx.is_admin = ctx.can('context_is_admin', fatal=False)
    return ctx


def warn_if_open(conf, url, stream=None):
    """Log and print on ``stream`` (stderr by default) one WARNING line
    when the compute API at ``url`` serves anonymous callers
    (``noauth2``); return the line, or None when it authenticates
    them."""
    return common_auth.warn_if_open(conf, SERVICE, url, CONF_FILE,
                                    OPEN_STRATEGY, stream=stream)
