"""Authentication strategies and the request context they produce.

* ``noauth``: identity from ``X-Project-Id``, ``X-User-Id``, ``X-Roles``
  and ``X-Service-Roles``; with no headers, the defaults of ``[api]`` (an
  admin in the all-in-one).
* ``keystone``: keystonemiddleware ``auth_token`` validates the token
  (``[keystone_authtoken]``), removes any identity headers the client
  sent and sets them from the token; ``X-Service-Roles`` comes from a
  valid ``X-Service-Token``.
* ``http_basic``: oslo.middleware's basic auth checks the user and its
  bcrypt hash in an htpasswd file (``[api] http_basic_auth_user_file``);
  the YAML file ``[api] http_basic_identity_file`` maps a user name to
  its project, roles and service roles; a user missing from it acts in a
  project named like the user with ``[api] http_basic_default_roles``.
  Identity headers the client sent are removed first.

The strategies themselves are shared with the other two services
(``lite_common.auth``); a strategy that lacks what it needs stops the
API at start-up (``AuthConfigError``).

The discovery documents (``/``, ``/v2`` with an optional ``.json``) never
need credentials, so that keystoneauth version discovery works.
"""

import logging

from lite_common import auth as common_auth
from lite_common.auth import AuthConfigError  # noqa: F401 - re-exported

from cyborg_lite import context

LOG = logging.getLogger(__name__)
PUBLIC_PATHS = frozenset({'', '/', '/v2', '/v2/', '.json', '/.json',
                          '/v2.json', '/v2/.json'})
CONTEXT_KEY = 'cyborg_lite.context'
SERVICE = 'the cyborg-lite API'
CONF_FILE = 'cyborg-lite.conf'


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
    return context.RequestContext(
        project_id=project, user_id=environ.get('HTTP_X_USER_ID'),
        roles=context.with_implied_roles(roles),
        service_roles=service_roles, system_scope=system_scope,
        domain_id=domain_id,
        is_service=bool(set(service_roles) &
                        set(conf.api.service_token_roles)),
        # oslo.middleware's RequestId: this request's id, and the
        # caller's (Nova's) when it sent a valid X-OpenStack-Request-ID.
        request_id=environ.get('openstack.request_id'),
        global_request_id=environ.get('openstack.global_request_id'))


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


def wrap(app, conf):
    """Compose the configured authentication around ``app``;
    AuthConfigError when it lacks what it needs."""
    if conf.api.auth_strategy == 'noauth':
        return ContextMiddleware(app, conf, defaults=True)
    return common_auth.authenticate(
        ContextMiddleware(app, conf, defaults=False), conf,
        realm='cyborg-lite', public_paths=PUBLIC_PATHS)


def open_access_warning(conf, url):
    """The WARNING line for an API at ``url`` that serves anonymous
    callers (``noauth``), or None when it authenticates them."""
    if conf.api.auth_strategy != 'noauth':
        return None
    return common_auth.open_access_warning(SERVICE, url, CONF_FILE,
                                           'noauth')


def warn_if_open(conf, url, stream=None):
    """Log ``open_access_warning`` and print it on ``stream``
    (stderr by default), so that an operator reading either sees it."""
    return common_auth.warn_if_open(conf, SERVICE, url, CONF_FILE, 'noauth',
                                    stream=stream)
