"""Authentication strategies and the request context they produce.

* ``noauth``: identity from ``X-Project-Id``, ``X-User-Id``, ``X-Roles``
  and ``X-Service-Roles``; with no headers, the defaults of ``[api]`` (an
  admin in the all-in-one).
* ``keystone``: keystonemiddleware ``auth_token`` validates the token and
  sets the same headers.

The discovery documents (``/``, ``/v2`` with an optional ``.json``) never
need credentials, so that keystoneauth version discovery works.
"""

from cyborg_lite import context

PUBLIC_PATHS = frozenset({'', '/', '/v2', '/v2/', '.json', '/.json',
                          '/v2.json', '/v2/.json'})
CONTEXT_KEY = 'cyborg_lite.context'


def _split(value):
    return [v.strip() for v in (value or '').split(',') if v.strip()]


def context_from_environ(environ, conf, defaults=False):
    """A RequestContext from identity headers (set by the client in
    noauth, by auth_token otherwise)."""
    roles = _split(environ.get('HTTP_X_ROLES'))
    project = environ.get('HTTP_X_PROJECT_ID')
    if defaults:
        roles = roles or list(conf.api.noauth_default_roles)
        project = project or conf.api.noauth_default_project
    service_roles = _split(environ.get('HTTP_X_SERVICE_ROLES'))
    ctx = context.RequestContext(
        project_id=project, user_id=environ.get('HTTP_X_USER_ID'),
        roles=roles, service_roles=service_roles)
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


def wrap(app, conf):
    """Compose the configured authentication around ``app``."""
    strategy = conf.api.auth_strategy
    if strategy == 'noauth':
        return ContextMiddleware(app, conf, defaults=True)
    with_context = ContextMiddleware(app, conf, defaults=False)
    if strategy == 'keystone':
        from keystonemiddleware import auth_token
        authed = auth_token.AuthProtocol(
            with_context, {'oslo_config_config': conf})
    else:
        from oslo_middleware import basic_auth
        authed = basic_auth.BasicAuthMiddleware(
            with_context, auth_file=conf.api.http_basic_auth_user_file)
    return PublicPathBypass(authed, with_context)
