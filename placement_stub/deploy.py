"""The WSGI application, composed in code.

From the outside in:

1. ``RequestId`` gives every request an ``openstack.request_id`` (used in
   error bodies) and the ``x-openstack-request-id`` response header;
   ``RequestLog`` (``placement_stub.requestlog``) logs each request at
   INFO, as Placement does.
2. ``FaultWrapper`` turns any unexpected exception into a JSON 500, so no
   error ever leaves as an HTML page or a broken connection.
3. ``CORS`` (oslo.middleware), when ``[cors] allowed_origin`` is set.
4. ``HealthcheckRouter``: ``/healthcheck`` goes to oslo.middleware's
   health check, before authentication, so that load balancers can poll
   it without a token; ``OpenAPIRouter`` serves the API's OpenAPI
   description at ``/openapi.yaml``, without credentials either.
5. Authentication: keystonemiddleware ``auth_token`` when ``[api]
   auth_strategy = keystone`` (``/`` stays open, as in Placement), basic
   auth (``placement_stub.auth``) with ``http_basic``, else nothing:
   noauth2 trusts the identity headers.
6. ``ContextMiddleware`` builds the request context from the identity
   headers (``noauth_identity``) and the microversion, with the
   policy enforcer (``placement_stub.policies``) that each handler
   asks, and adds the version headers to the response.
7. ``RequestGuard`` (``placement_stub.guard``): 400 for a path or
   query string that is not UTF-8 or holds a NUL.
8. ``handler.dispatch``: the route table.
"""

import functools
import gc
import importlib.resources
import logging
import time

from oslo_middleware import cors
from oslo_middleware import healthcheck
from oslo_middleware import request_id
import webob
import webob.dec
import webob.exc
from wsgiref import handlers as wsgiref_handlers

from placement_stub import auth
from placement_stub import context as context_lib
from placement_stub.db import api as db_api
from placement_stub import errors
from placement_stub import guard
from placement_stub import handler
from placement_stub import microversion as mv
from placement_stub import policies
from placement_stub import requestlog

LOG = logging.getLogger(__name__)


class FaultWrapper:
    """Last resort: any exception becomes Placement's JSON 500."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        try:
            return self.app(environ, start_response)
        except Exception:
            LOG.exception('Unexpected error in %s %s',
                          environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            environ['HTTP_ACCEPT'] = 'application/json'
            exc = errors.http(webob.exc.HTTPInternalServerError,
                              'An unexpected error occurred.')
            return exc(environ, start_response)


class HealthcheckRouter:
    """Sends ``/healthcheck`` to oslo.middleware's health check app."""

    PATH = '/healthcheck'

    def __init__(self, app):
        self.app = app
        self.healthcheck = healthcheck.Healthcheck.app_factory({})

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') == self.PATH:
            return self.healthcheck(environ, start_response)
        return self.app(environ, start_response)


@functools.cache
def openapi_document() -> bytes:
    """The OpenAPI description of the API, shipped in this package."""
    return importlib.resources.files(__package__).joinpath(
        'openapi.yaml').read_bytes()


class OpenAPIRouter:
    """Serves ``openapi_document`` at ``/openapi.yaml`` (``GET`` and
    ``HEAD``; any other method is a 405)."""

    PATH = '/openapi.yaml'

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') != self.PATH:
            return self.app(environ, start_response)
        if environ['REQUEST_METHOD'] not in ('GET', 'HEAD'):
            environ['HTTP_ACCEPT'] = 'application/json'
            resp = errors.http(
                webob.exc.HTTPMethodNotAllowed,
                'The method specified is not allowed for this resource.',
                headers=[('Allow', 'GET, HEAD')])
        else:
            resp = webob.Response(body=openapi_document(),
                                  content_type='application/yaml',
                                  charset='utf-8')
        return resp(environ, start_response)


# What keystoneauth's ``none`` plugin sends as its token.
NOAUTH_PLACEHOLDER_TOKEN = 'notused'


def noauth_identity(headers):
    """``(user_id, project_id, roles, system_scope)`` of a request, read
    as Placement's noauth2 reads it, with the stub's one addition.

    The identity headers (``X-User-Id``, ``X-Project-Id``, ``X-Roles``,
    ``OpenStack-System-Scope``) win; else ``X-Auth-Token`` names
    ``user[:project]``, and the user ``admin`` has the admin role, any
    other user none. A request with no token, or with keystoneauth's
    placeholder, and no ``X-Roles`` is the admin's (Placement answers it
    401): the all-in-one and clients configured with ``auth_type =
    none`` call the stub so.
    """
    token = headers.get('X-Auth-Token') or ''
    if token == NOAUTH_PLACEHOLDER_TOKEN:
        token = ''
    token_user, _sep, token_project = token.partition(':')
    system_scope = headers.get('OpenStack-System-Scope') or None
    user_id = headers.get('X-User-Id') or token_user or 'admin'
    project_id = headers.get('X-Project-Id') or (
        None if system_scope else token_project or token_user or 'admin')
    roles = headers.get('X-Roles')
    if roles is not None:
        roles = [r.strip() for r in roles.split(',') if r.strip()]
    elif not token_user or token_user == 'admin':
        roles = ['admin']
    else:
        roles = []
    return user_id, project_id, roles, system_scope


def authenticated_identity(headers):
    """``(user_id, project_id, roles, system_scope)`` of a request that
    an auth middleware (keystonemiddleware, http_basic) let through:
    the headers it set and nothing else. A token scoped to a domain has
    no project (``X-Project-Id`` absent), so no project-scoped rule
    admits it; its token never stands for a user or a project, as it
    does under noauth2."""
    roles = [r.strip() for r in (headers.get('X-Roles') or '').split(',')
             if r.strip()]
    return (headers.get('X-User-Id') or None,
            headers.get('X-Project-Id') or None, roles,
            headers.get('OpenStack-System-Scope') or None)


class ContextMiddleware:
    """Microversion, identity and the request context (whose ``can``
    checks the policy)."""

    def __init__(self, app, facade, enforcer, conf):
        self.app = app
        self.facade = facade
        self.enforcer = enforcer
        self.conf = conf

    def _context(self, req, version):
        authenticated = self.conf.api.auth_strategy != 'noauth2'
        identity = (authenticated_identity if authenticated
                    else noauth_identity)
        user_id, project_id, roles, system_scope = identity(req.headers)
        return context_lib.RequestContext(
            facade=self.facade, version=version, enforcer=self.enforcer,
            config=self.conf,
            user_id=user_id, project_id=project_id, roles=roles,
            system_scope=system_scope, is_admin='admin' in roles,
            # A domain-scoped token's domain: oslo.policy refuses it the
            # project-scoped rules.
            domain_id=(req.headers.get('X-Domain-Id') or None
                       if authenticated else None),
            request_id=req.environ.get('openstack.request_id'),
            # The caller's (Nova's, cyborg-lite's) valid
            # X-OpenStack-Request-ID, which oslo.log's lines name too.
            global_request_id=req.environ.get(
                'openstack.global_request_id'))

    def _version(self, req):
        try:
            return mv.extract_version(req.headers), None
        except mv.InvalidVersion as exc:
            return None, errors.bad_request('invalid version string: %s'
                                            % exc)
        except mv.UnacceptableVersion as exc:
            return None, errors.unacceptable_version(str(exc))

    @webob.dec.wsgify
    def __call__(self, req):
        version, error = self._version(req)
        # Errors are JSON whatever the client accepts; handlers check the
        # Accept header it sent.
        if 'HTTP_ACCEPT' in req.environ:
            req.environ['placement.accept'] = req.environ['HTTP_ACCEPT']
        req.environ['HTTP_ACCEPT'] = 'application/json'
        if error is not None:
            return error
        req.environ[mv.ENVIRON_KEY] = version
        req.environ['placement.context'] = self._context(req, version)
        resp = req.get_response(self.app)
        self._add_headers(req, resp, version)
        return resp

    @staticmethod
    def _add_headers(req, resp, version):
        resp.headers[mv.HEADER] = '%s %s' % (mv.SERVICE_TYPE,
                                             mv.version_string(version))
        resp.headers.add('Vary', mv.HEADER.lower())
        if (mv.allow_cache_headers(version)
                and resp.status_int in (200, 201) and resp.body):
            resp.headers['Cache-Control'] = 'no-cache'
            resp.headers['Last-Modified'] = wsgiref_handlers.format_date_time(
                time.time())


def freeze_startup_heap():
    """Keep the objects of a started server out of full GC passes.

    A started app holds ~125,000 long-lived objects (modules, SQLAlchemy
    metadata and caches); a request building a thousand allocation
    candidates allocates enough to trigger a full collection every few
    requests, and each full pass walked all of them (tens of ms, the p95
    of ``GET /allocation_candidates``). Collect once, then freeze what
    is left, as the server entry points do after ``deploy()``.
    """
    gc.collect()
    gc.freeze()


def deploy(conf, facade=None):
    """The composed WSGI application for ``conf``;
    ``AuthConfigError`` when its authentication
    cannot work."""
    facade = facade or db_api.create_facade(conf)
    app = ContextMiddleware(guard.RequestGuard(handler.dispatch), facade,
                            policies.make_enforcer(conf), conf)
    # Authentication that cannot work refuses here, before any database
    # work.
    app = auth.wrap(app, conf)
    if conf.placement.sync_on_startup:
        db_api.sync(facade)
    app = OpenAPIRouter(HealthcheckRouter(app))
    if conf.cors.allowed_origin:
        app = cors.CORS(app, conf)
    app = FaultWrapper(app)
    return request_id.RequestId(requestlog.RequestLog(app))
