"""Authentication strategies and the request context they produce.

* ``noauth``: identity from ``X-Project-Id``, ``X-User-Id``, ``X-Roles``
  and ``X-Service-Roles``; with no headers, the defaults of ``[api]`` (an
  admin in the all-in-one).
* ``keystone``: keystonemiddleware ``auth_token`` validates the token
  (``[keystone_authtoken]``), removes any identity headers the client
  sent and sets them from the token; ``X-Service-Roles`` comes from a
  valid ``X-Service-Token``.
* ``http_basic``: oslo.middleware's basic auth checks the user and its
  bcrypt hash in an htpasswd file (``[api] http_basic_auth_user_file``),
  an unknown user as slowly as a wrong password
  (:mod:`lite_common.htpasswd`).
  oslo.middleware only sets ``X-User`` and ``X-User-Name``, so the rest
  of the identity comes from :class:`IdentityMap`: the YAML file
  ``[api] http_basic_identity_file`` maps a user name to its project,
  roles and service roles; a user missing from it acts in a project named
  like the user with ``[api] http_basic_default_roles``. Identity headers
  the client sent are removed first.

The discovery documents (``/``, ``/v2`` with an optional ``.json``) never
need credentials, so that keystoneauth version discovery works.
"""

import logging
import sys

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import loading as ks_loading
from oslo_middleware import basic_auth
import webob.exc

from cyborg_lite import context
from lite_common import htpasswd
from lite_common import identity_file

LOG = logging.getLogger(__name__)
PUBLIC_PATHS = frozenset({'', '/', '/v2', '/v2/', '.json', '/.json',
                          '/v2.json', '/v2/.json'})
CONTEXT_KEY = 'cyborg_lite.context'
# The headers auth_token sets; a client must never be able to set them.
IDENTITY_HEADERS = ('HTTP_X_PROJECT_ID', 'HTTP_X_PROJECT_NAME',
                    'HTTP_X_USER_ID', 'HTTP_X_USER_NAME', 'HTTP_X_USER',
                    'HTTP_X_ROLES', 'HTTP_X_SERVICE_ROLES',
                    'HTTP_X_SYSTEM_SCOPE', 'HTTP_X_DOMAIN_ID',
                    'HTTP_X_DOMAIN_NAME', 'HTTP_X_IDENTITY_STATUS',
                    'HTTP_X_SERVICE_IDENTITY_STATUS')


def _split(value):
    return [v.strip() for v in (value or '').split(',') if v.strip()]


def context_from_environ(environ, conf, defaults=False):
    """A RequestContext from identity headers (set by the client in
    noauth, by the auth middleware otherwise).

    The token's scope is its project (``X-Project-Id``), its domain
    (``X-Domain-Id``) or the whole system (``X-System-Scope: all``), as
    keystonemiddleware sets them. With ``defaults`` (noauth), a request
    that names no scope and no roles gets ``[api] noauth_default_*``.
    """
    roles = _split(environ.get('HTTP_X_ROLES'))
    project = environ.get('HTTP_X_PROJECT_ID') or None
    system_scope = environ.get('HTTP_X_SYSTEM_SCOPE') or None
    domain_id = None if project else environ.get('HTTP_X_DOMAIN_ID') or None
    if defaults:
        roles = roles or list(conf.api.noauth_default_roles)
        if not (system_scope or domain_id):
            project = project or conf.api.noauth_default_project
    service_roles = _split(environ.get('HTTP_X_SERVICE_ROLES'))
    ctx = context.RequestContext(
        project_id=project, user_id=environ.get('HTTP_X_USER_ID'),
        roles=context.with_implied_roles(roles),
        service_roles=service_roles, system_scope=system_scope,
        domain_id=domain_id)
    ctx.is_service = bool(set(service_roles) &
                          set(conf.api.service_token_roles))
    request_id = environ.get('openstack.request_id')
    if request_id:
        ctx.request_id = request_id
    return ctx


class ContextMiddleware:
    """Puts the caller's RequestContext into the WSGI environ."""

    def __init__(self, app, conf, defaults):
        self.app = app
        self.conf = conf
        self.defaults = defaults

    def __call__(self, environ, start_response):
        environ[CONTEXT_KEY] = context_from_environ(environ, self.conf,
                                                    self.defaults)
        return self.app(environ, start_response)


class PublicPathBypass:
    """Sends the discovery documents around the auth middleware."""

    def __init__(self, authenticated_app, public_app):
        self.authenticated_app = authenticated_app
        self.public_app = public_app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') in PUBLIC_PATHS:
            return self.public_app(environ, start_response)
        return self.authenticated_app(environ, start_response)


class IdentityMap:
    """User name -> project, roles and service roles, for http_basic.

    The file is YAML::

        nova:
          project_id: service
          roles: [admin]
          service_roles: [service]
        alice:
          project_id: 6f1e...
          roles: [member, reader]
    """

    def __init__(self, entries, default_roles):
        self.entries = entries
        self.default_roles = list(default_roles)

    @classmethod
    def load(cls, path, default_roles):
        return cls(identity_file.read(path) if path else {},
                   default_roles)

    def headers(self, username):
        """The identity headers (as WSGI environ keys) of ``username``."""
        entry = self.entries.get(username) or {}
        roles = entry.get('roles', self.default_roles)
        return {
            'HTTP_X_PROJECT_ID': str(entry.get('project_id', username)),
            'HTTP_X_USER_ID': str(entry.get('user_id', username)),
            'HTTP_X_ROLES': ','.join(roles),
            'HTTP_X_SERVICE_ROLES': ','.join(entry.get('service_roles', [])),
        }


class BasicAuth:
    """oslo.middleware's basic auth, plus identity from an IdentityMap.

    oslo.middleware's ``BasicAuthMiddleware`` reads its file name from the
    global ``cfg.CONF``; its functions take the file explicitly, so this
    class calls them with ``[api] http_basic_auth_user_file``.
    """

    REALM = 'Basic realm="cyborg-lite"'

    def __init__(self, app, user_file, identities):
        basic_auth.validate_auth_file(user_file)
        self.app = app
        self.user_file = user_file
        self.identities = identities

    def __call__(self, environ, start_response):
        for name in IDENTITY_HEADERS:
            environ.pop(name, None)
        try:
            token = basic_auth.parse_header(environ)
            username, password = basic_auth.parse_token(token)
            environ.update(htpasswd.authenticate(self.user_file, username,
                                                 password))
        except webob.exc.HTTPBadRequest as exc:
            # A malformed header or an unreadable file: still a 401, so
            # that no client takes it for a problem with its request body.
            LOG.info('Basic auth failed: %s', exc.detail)
            return self._unauthorized(environ, start_response)
        except webob.exc.HTTPUnauthorized:
            return self._unauthorized(environ, start_response)
        except ValueError as exc:
            # bcrypt refuses a password longer than it hashes (72 bytes).
            LOG.info('Basic auth failed: %s', exc)
            return self._unauthorized(environ, start_response)
        environ.update(self.identities.headers(username))
        return self.app(environ, start_response)

    def _unauthorized(self, environ, start_response):
        resp = webob.exc.HTTPUnauthorized(
            detail='The request you have made requires authentication.',
            headers=[('WWW-Authenticate', self.REALM)])
        return resp(environ, start_response)


class AuthConfigError(ValueError):
    """The configured authentication cannot work: the API does not start."""


def keystone_auth_token(app, conf):
    """keystonemiddleware's auth_token around ``app``.

    It refuses to start without the service credentials that auth_token
    needs to validate tokens: without them every request would fail,
    each with a 500.
    """
    from keystonemiddleware import auth_token
    group = 'keystone_authtoken'
    try:
        authed = auth_token.AuthProtocol(app, {'oslo_config_config': conf})
        group = conf.keystone_authtoken.auth_section or group
        plugin = ks_loading.load_auth_from_conf_options(conf, group)
    except ks_exceptions.ClientException as exc:
        raise AuthConfigError(
            '[api] auth_strategy = keystone, but [%s] cannot make the '
            'credentials that validate tokens: %s' % (group, exc)) from exc
    if plugin is None:
        raise AuthConfigError(
            '[api] auth_strategy = keystone needs a service user to '
            'validate tokens: set [%s] auth_type (usually password) with '
            'auth_url, username, password, project_name, user_domain_name '
            'and project_domain_name' % group)
    return authed


def wrap(app, conf):
    """Compose the configured authentication around ``app``."""
    strategy = conf.api.auth_strategy
    if strategy == 'noauth':
        return ContextMiddleware(app, conf, defaults=True)
    with_context = ContextMiddleware(app, conf, defaults=False)
    if strategy == 'keystone':
        authed = keystone_auth_token(with_context, conf)
    else:
        identities = IdentityMap.load(conf.api.http_basic_identity_file,
                                      conf.api.http_basic_default_roles)
        authed = BasicAuth(with_context, conf.api.http_basic_auth_user_file,
                           identities)
    return PublicPathBypass(authed, with_context)


def open_access_warning(conf, url):
    """The WARNING line for an API at ``url`` that serves anonymous
    callers (``noauth``), or None when it authenticates them."""
    if conf.api.auth_strategy != 'noauth':
        return None
    return ('WARNING: the cyborg-lite API at %s is open: [api] '
            'auth_strategy = noauth serves any caller, as admin when it '
            'sends no identity headers. To close it, set [api] '
            'auth_strategy = keystone (or http_basic) in cyborg-lite.conf, '
            'or listen on a loopback address only.' % url)


def warn_if_open(conf, url, stream=None):
    """Log :func:`open_access_warning` and print it on ``stream``
    (stderr by default), so that an operator reading either sees it."""
    line = open_access_warning(conf, url)
    if line is not None:
        LOG.warning(line)
        print(line, file=stream or sys.stderr, flush=True)
    return line
