"""Pecan hooks and middleware that give each request what it needs.

``ServicesHook`` puts the conductor client, the policy enforcer and
the config on ``pecan.request``; ``MicroversionMiddleware`` parses
the requested version and sets the version headers on every /v2 response,
errors included.
"""

import pecan
import webob.exc
from pecan import hooks

from cyborg_lite import exception
from cyborg_lite.api import auth
from cyborg_lite.api import errors
from cyborg_lite.api import microversion

VERSION_KEY = 'cyborg_lite.microversion'
ROOT_PATHS = frozenset({'', '/', '/.json'})


class ServicesHook(hooks.PecanHook):
    def __init__(self, conf, conductor, enforcer):
        self.conf = conf
        self.conductor = conductor
        self.enforcer = enforcer

    def on_route(self, state):
        # Pecan decodes a JSON body while routing (to merge an object's
        # keys into the controller's arguments) and lets a RecursionError
        # from a deeply nested one escape as a 500: refuse it first. The
        # request keeps what it decoded for routing and validation.
        request = state.request
        if request.content_type in ('application/json',
                                    'application/javascript') and \
                request.body:
            try:
                _ = request.json
            except RecursionError:
                raise exception.Invalid(reason='Malformed JSON body: '
                                               'nested too deeply.')
            except (ValueError, UnicodeDecodeError):
                pass  # reported by validation.json_body, with details

    def before(self, state):
        request = state.request
        request.conf = self.conf
        request.conductor = self.conductor
        request.enforcer = self.enforcer
        request.ctx = request.environ.get(auth.CONTEXT_KEY)
        request.version = request.environ.get(VERSION_KEY,
                                              microversion.MIN_VERSION)

    def on_error(self, state, exc):
        status, message = errors.status_and_message(exc)
        allow = getattr(exc, 'headers', {}).get('Allow') if isinstance(
            exc, webob.exc.HTTPMethodNotAllowed) else None
        return errors.error_response(status, message,
                                     [('Allow', allow)] if allow else ())


class MicroversionMiddleware:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') in ROOT_PATHS:
            return self.app(environ, start_response)
        try:
            raw = environ.get('HTTP_OPENSTACK_API_VERSION')
            version = microversion.parse(
                {} if raw is None else {microversion.HEADER: raw})
        except exception.NotAcceptable as exc:
            headers = microversion.response_headers(microversion.MIN_VERSION)
            return errors.error_response(406, exc.message, headers)(
                environ, start_response)
        environ[VERSION_KEY] = version
        extra = microversion.response_headers(version)

        def _start_response(status, headers, exc_info=None):
            names = {name.lower() for name, _ in extra}
            kept = [(n, v) for n, v in headers if n.lower() not in names]
            return start_response(status, kept + extra, exc_info)
        return self.app(environ, _start_response)


def current():
    """(request, context, version) of the request being handled."""
    return pecan.request, pecan.request.ctx, pecan.request.version
