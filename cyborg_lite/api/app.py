"""The API WSGI application, composed in code.

From the outside in:

0. ``MountPrefix``: ``/accelerator/v2/...`` is served like ``/v2/...``,
   because upstream's links always name ``/accelerator`` (devstack mounts
   the API there) and clients follow those links.
1. ``RequestId`` (``cyborg_lite.api.middleware``): an
   ``x-openstack-request-id`` on every answer, errors included.
2. ``ErrorEnvelopeMiddleware``: any error that escapes, and Pecan's own
   404/405, leaves in Cyborg's error envelope, never as HTML or a
   traceback, with the error's own headers.
3. ``HealthcheckMiddleware`` (oslo.middleware): ``/healthcheck``, and
   ``OpenAPIRouter``: ``/v2/openapi.yaml`` (no auth, like discovery).
4. ``MicroversionMiddleware``: 406 out of range; version headers on
   every answer under it.
5. ``BodySizeLimit`` (``cyborg_lite.api.middleware``): 413 for
   bodies over ``[api] max_request_body_size``.
6. Authentication (``cyborg_lite.api.auth``), which puts the caller's
   context in the environ.
7. ``RequestGuard`` (``cyborg_lite.api.guard``): the API's routes and
   their methods (404, 405), and what Pecan must not route: paths and
   queries that are not UTF-8 or hold a NUL (400), an ``Accept`` without
   JSON (406), a body that is not JSON (415).
8. The Pecan app (``cyborg_lite.api.pecan_app``);
   ``ServicesHook`` hands it
   the conductor client, the policy enforcer and the config.

The API never touches the database: every read and write is an RPC call.
"""

import functools
import importlib.resources

import webob
from oslo_middleware import healthcheck

from cyborg_lite import policies
from cyborg_lite import rpc
from cyborg_lite.api import auth
from cyborg_lite.api import errors
from cyborg_lite.api import guard
from cyborg_lite.api import hooks
from cyborg_lite.api import middleware
from cyborg_lite.api import pecan_app
from cyborg_lite.api import request
from cyborg_lite.conductor import rpcapi


def build_pecan_app(conf, conductor):
    return pecan_app.make_app(
        'cyborg_lite.api.controllers.root.RootController',
        hooks=[hooks.ServicesHook(conf, conductor,
                                  policies.get_enforcer(conf))],
        force_canonical=False,
        guess_content_type_from_ext=False,
        request_cls=request.Request,
        debug=False)


def setup_app(conf, transport=None, conductor=None):
    """The API as a WSGI app, talking to the conductor over ``transport``
    (or through a given ``conductor`` client)."""
    if conductor is None:
        transport = transport or rpc.get_transport(conf)
        conductor = rpcapi.ConductorAPI(
            conf, transport, timeout=conf.api.rpc_timeout,
            batch_size=conf.api.rpc_batch_size)
    app = guard.RequestGuard(build_pecan_app(conf, conductor))
    app = auth.wrap(app, conf)
    app = middleware.BodySizeLimit(app, conf.api.max_request_body_size)
    app = hooks.MicroversionMiddleware(app)
    app = OpenAPIRouter(app)
    app = HealthcheckRouter(app, healthcheck.Healthcheck.app_factory(
        {}, backends='disable_by_file',
        disable_by_file_path=conf.api.healthcheck_disable_file))
    app = errors.ErrorEnvelopeMiddleware(app)
    return MountPrefix(middleware.RequestId(app))


class HealthcheckRouter:
    """Sends ``/healthcheck`` to oslo.middleware's health check app."""

    PATH = '/healthcheck'

    def __init__(self, app, healthcheck_app):
        self.app = app
        self.healthcheck_app = healthcheck_app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') == self.PATH:
            return self.healthcheck_app(environ, start_response)
        return self.app(environ, start_response)


@functools.cache
def openapi_document() -> bytes:
    """The OpenAPI description of the v2 API, shipped in this package
    (``api-ref/openapi.yaml`` links to it)."""
    return importlib.resources.files(__package__).joinpath(
        'openapi.yaml').read_bytes()


class OpenAPIRouter:
    """Serves ``openapi_document`` at ``/v2/openapi.yaml`` (and,
    like every path, without the ``/v2``), with no credentials."""

    PATHS = frozenset({'/v2/openapi.yaml', '/openapi.yaml'})

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') not in self.PATHS:
            return self.app(environ, start_response)
        if environ['REQUEST_METHOD'] not in ('GET', 'HEAD'):
            resp = errors.error_response(
                405, 'The method is not allowed for this resource.',
                [('Allow', 'GET, HEAD')])
        else:
            resp = webob.Response(body=openapi_document(),
                                  content_type='application/yaml',
                                  charset='utf-8')
        return resp(environ, start_response)


class MountPrefix:
    """Serves the API under ``/accelerator`` as well as at the root."""

    PREFIX = '/accelerator'

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        if path == self.PREFIX or path.startswith(self.PREFIX + '/'):
            environ['PATH_INFO'] = path[len(self.PREFIX):] or '/'
        return self.app(environ, start_response)
