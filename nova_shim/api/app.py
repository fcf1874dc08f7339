"""The compute API in the shape of Nova's: routing, context, errors.

A plain WSGI app over webob. Routing is one explicit table
(``ROUTES``); handlers live in ``servers`` and ``external_events``
and take ``(request, manager, **url_args)``. Paths may carry Nova's
``/v2.1`` prefix or not. Domain exceptions become Nova's error bodies
(``{"badRequest": {"code": 400, "message": ...}}``) in one table,
``ERRORS``.

``/healthcheck`` (oslo.middleware's health check, outside the API
routes and without identity) answers 200 while the service runs.

Every answer carries the request's id (oslo.middleware's ``RequestId``,
outermost, as in Nova's pipeline) in ``X-OpenStack-Request-ID`` and in
Nova's ``X-Compute-Request-Id``; the context, and so every log line of
the request, names it, and the caller's valid ``X-OpenStack-Request-ID``
as the global request id.

Authentication wraps this app (``nova_shim.api.auth``, composed by
``build_app``); the app builds each request's context from the
identity it set, and the handlers ask the policy (Nova's rule names,
``nova_shim.policies``) through ``context.can``, as Nova's do. The
user's token and service token go on to Cyborg with the calls made for
the request.

Bad input is a 4xx in Nova's error body, never a 500: the checks every
request goes through are in ``nova_shim.api.http``. A method a
path does not serve is a 405 whose ``Allow`` lists those it does.
"""

import logging
import re
from typing import Callable

from oslo_middleware import healthcheck
from oslo_middleware import request_id
import webob
import webob.dec

from nova_shim.api import auth
from nova_shim.api.handlers import external_events
from nova_shim.api.handlers import flavors
from nova_shim.api.handlers import instance_actions
from nova_shim.api.handlers import migrations
from nova_shim.api.handlers import server_actions
from nova_shim.api.handlers import servers
from nova_shim.api.handlers import services
from nova_shim.api.handlers import versions
from nova_shim.api import http
from nova_shim.api.http import error_response
from nova_shim.api.http import request_version
from nova_shim.api.http import VERSION_KEY
from nova_shim.api import openapi
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception
from nova_shim import policies

LOG = logging.getLogger(__name__)

_PREFIX = re.compile(r'^/v2(\.1)?(?=/|$)')
_UUID = r'(?P<uuid>[^/]+)'
_FLAVOR = re.compile(r'^/flavors/(?P<flavor>[^/]+)$')
_EXTRA_SPECS = re.compile(r'^/flavors/(?P<flavor>[^/]+)/os-extra_specs/?$')
_EXTRA_SPEC = re.compile(
    r'^/flavors/(?P<flavor>[^/]+)/os-extra_specs/(?P<key>[^/]+)$')

# (method, path regex, handler)
ROUTES: list[tuple[str, re.Pattern, Callable]] = [
    ('GET', re.compile(r'^/?$'), versions.versions),
    ('GET', re.compile(r'^/openapi\.yaml$'), openapi.show),
    ('GET', re.compile(r'^/flavors(/detail)?$'), flavors.list_flavors),
    ('POST', re.compile(r'^/flavors$'), flavors.create_flavor),
    ('GET', _FLAVOR, flavors.get_flavor),
    ('PUT', _FLAVOR, flavors.update_flavor),
    ('DELETE', _FLAVOR, flavors.delete_flavor),
    ('GET', _EXTRA_SPECS, flavors.list_extra_specs),
    ('POST', _EXTRA_SPECS, flavors.create_extra_specs),
    ('GET', _EXTRA_SPEC, flavors.show_extra_spec),
    ('PUT', _EXTRA_SPEC, flavors.update_extra_spec),
    ('DELETE', _EXTRA_SPEC, flavors.delete_extra_spec),
    ('GET', re.compile(r'^/servers$'), servers.list_servers),
    ('GET', re.compile(r'^/servers/detail$'), servers.list_servers_detail),
    ('POST', re.compile(r'^/servers$'), servers.create_server),
    ('GET', re.compile(r'^/servers/%s$' % _UUID), servers.show_server),
    ('DELETE', re.compile(r'^/servers/%s$' % _UUID), servers.delete_server),
    ('POST', re.compile(r'^/servers/%s/action$' % _UUID),
     server_actions.server_action),
    ('GET', re.compile(r'^/servers/%s/os-instance-actions$' % _UUID),
     instance_actions.list_actions),
    ('GET', re.compile(r'^/servers/%s/os-instance-actions/'
                       r'(?P<request_id>[^/]+)$' % _UUID),
     instance_actions.show_action),
    ('POST', re.compile(r'^/os-server-external-events$'),
     external_events.create),
    ('GET', re.compile(r'^/os-migrations$'), migrations.list_migrations),
    ('GET', re.compile(r'^/os-services$'), services.list_services),
    ('PUT', re.compile(r'^/os-services/(?P<service_id>[^/]+)$'),
     services.update_service),
]

# Domain exception -> (HTTP status, Nova's error body key).
ERRORS: list[tuple[type, int, str]] = [
    (exception.NotAuthenticated, 401, 'unauthorized'),
    (exception.PolicyNotAuthorized, 403, 'forbidden'),
    (exception.Forbidden, 403, 'forbidden'),
    (exception.InstanceNotFound, 404, 'itemNotFound'),
    (exception.ItemNotFound, 404, 'itemNotFound'),
    (exception.FlavorExists, 409, 'conflictingRequest'),
    (exception.ServiceNotFound, 404, 'itemNotFound'),
    (exception.ComputeHostNotFound, 404, 'itemNotFound'),
    (exception.ComputeServiceInUse, 400, 'badRequest'),
    (exception.FlavorNotFound, 400, 'badRequest'),
    (exception.InstanceInvalidState, 409, 'conflictingRequest'),
    (exception.InstanceNotReady, 409, 'conflictingRequest'),
    (exception.InstanceDeleting, 409, 'conflictingRequest'),
    (exception.ForbiddenWithAccelerators, 400, 'badRequest'),
    (exception.NotSupported, 400, 'badRequest'),
    (exception.InvalidRequest, 400, 'badRequest'),
    (exception.InvalidGlobalAPIVersion, 406, 'computeFault'),
    (exception.NoValidHost, 400, 'badRequest'),
    (exception.DeviceProfileError, 400, 'badRequest'),
]


class RequestId(request_id.RequestId):
    """oslo.middleware's request id, also in Nova's own header."""

    compat_headers = ['x-compute-request-id']


def build_app(manager: ComputeManager, conf) -> Callable:
    """The compute API with the authentication of ``conf`` around it;
    AuthConfigError when that cannot work."""
    return RequestId(auth.wrap(ComputeAPI(manager, conf), conf))


class ComputeAPI:
    """The WSGI application."""

    def __init__(self, manager: ComputeManager, conf) -> None:
        self.manager = manager
        self.conf = conf
        self.enforcer = policies.make_enforcer(conf)
        self.healthcheck = healthcheck.Healthcheck.app_factory({})

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        # Before anything decodes the path or the query string.
        refused = http.request_error(req.environ)
        if refused is not None:
            return refused
        if req.path_info.rstrip('/') == '/healthcheck':
            return req.get_response(self.healthcheck)
        path = _PREFIX.sub('', req.path_info) or '/'
        try:
            version = request_version(req)
            req.environ[VERSION_KEY] = version
            req.environ[http.CONTEXT_KEY] = auth.context_from_environ(
                req.environ, self.conf, self.enforcer)
            handler, args = self._route(req.method, path)
            refused = http.content_type_error(req)
            if refused is not None:
                return refused
            resp = handler(req, self.manager, **args)
        except exception.NovaShimException as exc:
            resp = self._error(exc)
        except Exception:  # noqa: BLE001 - Nova's computeFault
            LOG.exception('%s %s failed', req.method, req.path)
            return error_response(500, 'computeFault',
                                  'Unexpected API Error.')
        else:
            # As Nova: the version in both headers, which the answer
            # varies by.
            resp.headers['OpenStack-API-Version'] = 'compute %d.%d' % version
            resp.headers['X-OpenStack-Nova-API-Version'] = '%d.%d' % version
            resp.headers.add('Vary', 'OpenStack-API-Version')
            resp.headers.add('Vary', 'X-OpenStack-Nova-API-Version')
        return resp

    @staticmethod
    def _route(method: str, path: str) -> tuple[Callable, dict]:
        allowed = []
        for route_method, pattern, handler in ROUTES:
            match = pattern.match(path)
            if match:
                allowed.append(route_method)
                if route_method == method:
                    return handler, match.groupdict()
        if allowed:
            raise _HTTPError(405, 'badMethod', 'Method not allowed.',
                             allow=allowed)
        raise _HTTPError(404, 'itemNotFound', 'Not found: %s' % path[:200])

    @staticmethod
    def _error(exc: exception.NovaShimException) -> webob.Response:
        if isinstance(exc, _HTTPError):
            resp = error_response(exc.status, exc.key, str(exc))
            if exc.allow:
                resp.headers['Allow'] = ', '.join(exc.allow)
            return resp
        for exc_type, status, key in ERRORS:
            if isinstance(exc, exc_type):
                return error_response(status, key, str(exc))
        LOG.error('Request failed: %s', exc)
        return error_response(500, 'computeFault', str(exc))


class _HTTPError(exception.NovaShimException):
    def __init__(self, status: int, key: str, message: str,
                 allow: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.key = key
        self.allow = allow
