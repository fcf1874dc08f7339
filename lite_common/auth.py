"""Authentication that the three services share.

Each service takes ``[api] auth_strategy``:

* ``keystone`` (the default): keystonemiddleware's ``auth_token``
  validates the token with the service user of ``[keystone_authtoken]``,
  removes any identity header the client sent and sets them from the
  token (``keystone_auth_token``);
* ``http_basic``: oslo.middleware's basic auth against an htpasswd file,
  with the rest of the identity (project, roles, service roles) from a
  YAML identity file (``BasicAuth``, ``IdentityMap``);
* an open mode named as the service it imitates names it (``noauth`` in
  cyborg-lite, ``noauth2`` in the placement stub and nova_shim), which
  serves any caller and says so once at start-up
  (``warn_if_open``).

A strategy that lacks what it needs (Keystone credentials, the htpasswd
file) would fail every request; instead the service refuses to start,
with one line that names the options to set: ``AuthConfigError``,
which a console script turns into that line and exit status 1
(``refuse_to_start``) and a WSGI entry point into the error its
server reports as an application that cannot load
(``wsgi_load_error``).
"""

import logging
import sys

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_middleware import basic_auth
from oslo_middleware import exceptions as middleware_exceptions
import webob.exc

from lite_common import htpasswd
from lite_common import identity_file

LOG = logging.getLogger(__name__)

KEYSTONE_GROUP = 'keystone_authtoken'
# The headers that keystonemiddleware sets from a token (WSGI environ
# keys); a client must never be able to set them where callers are
# authenticated.
IDENTITY_HEADERS = (
    'HTTP_X_PROJECT_ID', 'HTTP_X_PROJECT_NAME', 'HTTP_X_TENANT_ID',
    'HTTP_X_TENANT_NAME', 'HTTP_X_TENANT', 'HTTP_X_PROJECT_DOMAIN_ID',
    'HTTP_X_PROJECT_DOMAIN_NAME', 'HTTP_X_USER_ID', 'HTTP_X_USER_NAME',
    'HTTP_X_USER', 'HTTP_X_USER_DOMAIN_ID', 'HTTP_X_USER_DOMAIN_NAME',
    'HTTP_X_ROLES', 'HTTP_X_ROLE', 'HTTP_X_SERVICE_ROLES',
    'HTTP_X_SYSTEM_SCOPE', 'HTTP_OPENSTACK_SYSTEM_SCOPE',
    'HTTP_X_DOMAIN_ID', 'HTTP_X_DOMAIN_NAME', 'HTTP_X_IDENTITY_STATUS',
    'HTTP_X_SERVICE_IDENTITY_STATUS', 'HTTP_X_IS_ADMIN_PROJECT',
    'HTTP_X_SERVICE_CATALOG')


def strategy_opts(open_strategy: str, open_identity: str, user_file: str,
                  default_roles: list[str], service: str) -> list[cfg.Opt]:
    """The ``[api]`` options of the strategies, for ``service``: the
    choice (``keystone`` by default, ``http_basic``, or the open mode
    ``open_strategy``, whose callers' identity ``open_identity`` says
    where it comes from) and http_basic's files and default roles."""
    return [
        cfg.StrOpt('auth_strategy', default='keystone',
                   choices=[('keystone', 'keystonemiddleware auth_token, '
                                         'with [keystone_authtoken]'),
                            ('http_basic', 'HTTP basic auth against an '
                                           'htpasswd file'),
                            (open_strategy, 'open: ' + open_identity)],
                   help='How %s authenticates requests: keystone, as the '
                        'service it imitates; %s serves any caller (the '
                        'all-in-one and the tests set it, on loopback) and '
                        'says so at start-up.' % (service, open_strategy)),
        cfg.StrOpt('http_basic_auth_user_file', default=user_file,
                   help='htpasswd file (bcrypt) for auth_strategy '
                        'http_basic.'),
        cfg.StrOpt('http_basic_identity_file',
                   help='With http_basic, a YAML file mapping each user '
                        'name to its project_id, user_id, roles and '
                        'service_roles. A user missing from it (or every '
                        'user, when unset) acts in a project named like the '
                        'user, with http_basic_default_roles and no service '
                        'roles.'),
        cfg.ListOpt('http_basic_default_roles', default=default_roles,
                    help='With http_basic, the roles of a user that '
                         'http_basic_identity_file does not name.'),
    ]


class AuthConfigError(ValueError):
    """The configured authentication cannot work: the service does not
    start. The message names the options to set."""


def keystone_auth_token(app, conf):
    """keystonemiddleware's ``auth_token`` around ``app``, configured
    from ``conf`` (``[keystone_authtoken]``).

    AuthConfigError when ``[keystone_authtoken]`` cannot make the
    service credentials that validate tokens: without them every
    request would fail, each with a 500.
    """
    from keystonemiddleware import auth_token
    # The credentials are checked before auth_token is built, so that a
    # refusal is the only thing the service says.
    ks_loading.register_auth_conf_options(conf, KEYSTONE_GROUP)
    group = conf[KEYSTONE_GROUP].auth_section or KEYSTONE_GROUP
    try:
        ks_loading.register_auth_conf_options(conf, group)
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
    return auth_token.AuthProtocol(app, {'oslo_config_config': conf})


class IdentityMap:
    """User name -> project, roles and service roles, for http_basic.

    oslo.middleware's basic auth sets only ``X-User`` and
    ``X-User-Name``; the rest of a caller's identity comes from a YAML
    file (read and checked by ``lite_common.identity_file.read``)::

        nova:
          project_id: service
          roles: [admin]
          service_roles: [service]
        alice:
          project_id: 6f1e...
          roles: [member, reader]

    A user missing from it acts in a project named like the user, with
    ``default_roles``.
    """

    def __init__(self, entries, default_roles):
        self.entries = entries
        self.default_roles = list(default_roles)

    @classmethod
    def load(cls, path, default_roles,
             option='[api] http_basic_identity_file'):
        """The map of the file at ``path`` (none: an empty map);
        AuthConfigError when it cannot be read or is malformed."""
        if not path:
            return cls({}, default_roles)
        try:
            return cls(identity_file.read(path), default_roles)
        except (OSError, ValueError) as exc:
            raise AuthConfigError(
                '[api] auth_strategy = http_basic, but %s (%s) cannot be '
                'used: %s' % (option, path, exc)) from exc

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


def check_user_file(path, option='[api] http_basic_auth_user_file'):
    """AuthConfigError unless ``path`` is an htpasswd file that
    oslo.middleware can read: readable, each entry ``user:<bcrypt>``."""
    problem = None
    try:
        with open(path, encoding='utf-8') as f:
            f.read()
        basic_auth.validate_auth_file(path)
    except OSError as exc:
        problem = exc.strerror or str(exc)
    except UnicodeError:
        problem = 'it is not UTF-8 text'
    except middleware_exceptions.ConfigInvalid:
        problem = 'it cannot be read'
    except webob.exc.HTTPBadRequest as exc:
        # oslo.middleware's word for an entry that is not bcrypt; it
        # names the user, never the hash.
        problem = exc.detail
    if problem is not None:
        raise AuthConfigError(
            '[api] auth_strategy = http_basic needs %s, a readable htpasswd '
            'file of bcrypt entries; %s: %s' % (option, path, problem))


class BasicAuth:
    """oslo.middleware's basic auth, with identity from an IdentityMap.

    oslo.middleware's ``BasicAuthMiddleware`` reads its file name from
    the global ``cfg.CONF``; its functions take the file explicitly, so
    this class calls them with the service's own. An unknown user costs
    as much as a wrong password (``lite_common.htpasswd``). Identity
    headers the client sent are removed first. ``unauthorized(environ,
    start_response)`` answers a refused caller in the service's own
    error format (webob's page when None).
    """

    def __init__(self, app, user_file, identities, realm, unauthorized=None):
        check_user_file(user_file)
        self.app = app
        self.user_file = user_file
        self.identities = identities
        self.challenge = 'Basic realm="%s"' % realm
        self.unauthorized = unauthorized or self._unauthorized

    def __call__(self, environ, start_response):
        for name in IDENTITY_HEADERS:
            environ.pop(name, None)
        try:
            token = basic_auth.parse_header(environ)
            username, password = basic_auth.parse_token(token)
            environ.update(htpasswd.authenticate(self.user_file, username,
                                                 password))
        except (webob.exc.HTTPBadRequest, webob.exc.HTTPUnauthorized,
                ValueError) as exc:
            # A malformed header or an unreadable file is still a 401, so
            # that no client takes it for a problem with its request
            # body; ValueError: bcrypt refuses a password over 72 bytes.
            LOG.info('Basic auth failed: %s',
                     getattr(exc, 'detail', None) or exc)
            return self._challenge(environ, start_response)
        environ.update(self.identities.headers(username))
        return self.app(environ, start_response)

    def _challenge(self, environ, start_response):
        def with_challenge(status, headers, exc_info=None):
            headers = [h for h in headers
                       if h[0].lower() != 'www-authenticate']
            headers.append(('WWW-Authenticate', self.challenge))
            return start_response(status, headers, exc_info)
        return self.unauthorized(environ, with_challenge)

    @staticmethod
    def _unauthorized(environ, start_response):
        resp = webob.exc.HTTPUnauthorized(
            detail='The request you have made requires authentication.')
        return resp(environ, start_response)


class PublicPathBypass:
    """Sends the paths that need no credentials (version discovery,
    health checks) around the auth middleware."""

    def __init__(self, authenticated_app, public_app, public_paths):
        self.authenticated_app = authenticated_app
        self.public_app = public_app
        self.public_paths = frozenset(public_paths)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') in self.public_paths:
            return self.public_app(environ, start_response)
        return self.authenticated_app(environ, start_response)


def authenticate(app, conf, realm, public_paths, public_app=None,
                 unauthorized=None):
    """``app`` behind the strategy of ``conf`` that authenticates
    (``keystone`` or ``http_basic``), but for ``public_paths``, which go
    to ``public_app`` (``app`` itself by default) without credentials.
    ``realm`` and ``unauthorized`` are http_basic's challenge and 401
    (see ``BasicAuth``). AuthConfigError when the strategy lacks
    what it needs."""
    if conf.api.auth_strategy == 'keystone':
        authed = keystone_auth_token(app, conf)
    else:
        identities = IdentityMap.load(conf.api.http_basic_identity_file,
                                      conf.api.http_basic_default_roles)
        authed = BasicAuth(app, conf.api.http_basic_auth_user_file,
                           identities, realm=realm, unauthorized=unauthorized)
    return PublicPathBypass(authed, public_app or app, public_paths)


def open_access_warning(service, url, conf_file, open_strategy):
    """The one WARNING line of a service at ``url`` that serves
    anonymous callers (``[api] auth_strategy = open_strategy``)."""
    loopback = url.startswith(('http://127.', 'http://[::1]',
                               'http://localhost'))
    where = ('' if loopback else
             ', or listen on a loopback address only')
    return ('WARNING: %s at %s is open: [api] auth_strategy = %s serves '
            'any caller, as admin when it sends no identity. To close it, '
            'set [api] auth_strategy = keystone (or http_basic) in %s%s.'
            % (service, url, open_strategy, conf_file, where))


def warn_if_open(conf, service, url, conf_file, open_strategy, stream=None):
    """Log ``open_access_warning`` and print it on ``stream``
    (stderr by default) when ``conf`` has the open strategy, so that an
    operator reading either sees it; return the line, or None when the
    service authenticates its callers."""
    if conf.api.auth_strategy != open_strategy:
        return None
    line = open_access_warning(service, url, conf_file, open_strategy)
    LOG.warning(line)
    print(line, file=stream or sys.stderr, flush=True)
    return line


def refuse_to_start(program, exc, stream=None):
    """Print why ``program`` does not start, one line on ``stream``
    (stderr by default), and return the exit status (1)."""
    print('%s cannot start: %s' % (program, exc), file=stream or sys.stderr,
          flush=True)
    return 1


def wsgi_load_error(program, exc):
    """The exception a WSGI entry point raises when it refuses to load.

    gunicorn prints the message of its ``AppImportError`` on one line,
    without a traceback, and stops every worker and the master; other
    servers (uwsgi, mod_wsgi) report any exception as an application
    that failed to load.
    """
    message = '%s cannot start: %s' % (program, exc)
    try:
        from gunicorn.errors import AppImportError
    except ImportError:
        return RuntimeError(message)
    return AppImportError(message)


def built_or_refused(program, build):
    """``build()``, or the ``wsgi_load_error`` of a configuration that
    cannot serve: an ``AuthConfigError``, or oslo.config's refusal of a
    bad file (a ``SystemExit`` with a message)."""
    try:
        return build()
    except AuthConfigError as exc:
        raise wsgi_load_error(program, exc) from None
    except SystemExit as exc:
        if isinstance(exc.code, str):
            raise wsgi_load_error(program, exc.code) from None
        raise
