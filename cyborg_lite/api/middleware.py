"""The request id and the body size limit, as plain WSGI.

oslo.middleware's ``RequestId`` and ``RequestBodySizeLimiter`` go through
WebOb's ``wsgify``: each wraps every request in a WebOb request and its
answer in a WebOb response, and clones its own bound method, to read one
header and add another. Under load that was 7 % of an API worker's CPU.
These two do the same work on the environ and the header list, with
oslo.middleware's names and its limiting reader:

* ``RequestId`` gives every request ``openstack.request_id`` (a new
  ``req-<uuid>``) and answers it in ``x-openstack-request-id``; a valid
  inbound ``X-OpenStack-Request-ID`` becomes
  ``openstack.global_request_id``, as oslo.middleware does; a context
  with these ids becomes the thread's current one, for the log lines
  written before the caller's context replaces it;
* ``BodySizeLimit`` answers 413 to a ``Content-Length`` over the
  limit, and stops a body of no stated length (chunked) once it passes
  the limit.
"""

import re

from oslo_context import context
from oslo_middleware import request_id
from oslo_middleware import sizelimit

from cyborg_lite.api import errors

_GLOBAL_ID = re.compile(request_id.ID_FORMAT)
_HEADER = request_id.HTTP_RESP_HEADER_REQUEST_ID


class RequestId:
    """A request id in the environ and in the response headers."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        inbound = environ.get('HTTP_X_OPENSTACK_REQUEST_ID', '')
        global_id = None
        if inbound and _GLOBAL_ID.match(inbound):
            global_id = environ[request_id.GLOBAL_REQ_ID] = inbound
        req_id = environ[request_id.ENV_REQUEST_ID] = \
            context.generate_request_id()
        # The thread's current context (which oslo.log's lines name)
        # holds this request's ids from now on, even where the request
        # is refused before the caller's context is built.
        context.RequestContext(request_id=req_id,
                               global_request_id=global_id)

        def start_with_id(status, headers, exc_info=None):
            if not any(name.lower() == _HEADER for name, _ in headers):
                headers = list(headers) + [(_HEADER, req_id)]
            return start_response(status, headers, exc_info)

        return self.app(environ, start_with_id)


class BodySizeLimit:
    """413 for request bodies larger than ``max_size`` bytes."""

    def __init__(self, app, max_size: int):
        self.app = app
        self.max_size = max_size

    def __call__(self, environ, start_response):
        length = _content_length(environ)
        if length is not None and length > self.max_size:
            return errors.error_response(
                413, 'Request is too large. Larger than '
                     'max_request_body_size (%d bytes).' % self.max_size)(
                environ, start_response)
        if length is None:
            environ['wsgi.input'] = sizelimit.LimitingReader(
                environ['wsgi.input'], self.max_size)
            # As oslo.middleware leaves it: WebOb reads the body to its end.
            environ['webob.is_body_readable'] = True
        return self.app(environ, start_response)


def _content_length(environ):
    """The request's Content-Length, or None where it states none (or
    none that is a number), as WebOb reads it."""
    try:
        return int(environ.get('CONTENT_LENGTH') or '')
    except ValueError:
        return None
