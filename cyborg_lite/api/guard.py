"""What a request must be before Pecan routes it, and the API's routes.

Pecan and WebOb answer some malformed requests with a 500, or route them
where they do not belong:

* WebOb parses a form body whenever Pecan's REST routing reads
  ``request.params``, and a multipart type without a (valid) boundary
  raises;
* an empty path segment (``/device_profiles//``, ``/devices/%2F``) calls
  a handler without its id;
* a ``PUT`` on a collection falls through Pecan's lookups to a 404;
* an ``Accept`` that admits no JSON is a 406 that Pecan logs as an
  error;
* ``?_method=`` lets a query string choose the handler.

``RequestGuard`` answers each of these in the error envelope before
Pecan sees the request, from ``ROUTES``, the one table of the paths
the API serves and the methods of each:

=========================================================  ===========
the request                                                answer
=========================================================  ===========
a path or query string that is not UTF-8 or holds a NUL    400
``_method`` in the query string                            400
a path that names no route (an empty id included)          404
a method its route does not serve                          405, Allow
an ``Accept`` header that admits no ``application/json``   406
a body whose ``Content-Type`` is neither JSON nor absent   415
=========================================================  ===========

JSON is ``application/json``, and the two types upstream's WSME also
reads as JSON (``application/javascript``, ``text/javascript``), in
UTF-8: any other ``charset`` is a 415. A body sent without a type is
read as JSON (upstream refuses it too). A server that reports a missing
type as ``text/plain`` (wsgiref does) makes such a body a 415. A request
without a body has no media type: its ``Content-Type`` is dropped, so
nothing parses a form from it.

``HEAD`` is served wherever ``GET`` is: the app answers a ``GET`` and
the body is left out.

Checking these costs a few dictionary lookups per request; nothing here
reads the body.
"""

import re
import urllib.parse

from webob import acceptparse

from lite_common import request_text

from cyborg_lite.api import errors

# Stands for one path segment that names an object (its uuid or name).
ID = '{id}'

# The v2 API's paths (relative to /v2, which is optional) and the
# methods each serves. api-ref/openapi.yaml describes the same routes; a
# test holds the two together.
ROUTES = {
    (): ('GET',),
    ('device_profiles',): ('GET', 'POST', 'DELETE'),
    ('device_profiles', ID): ('GET', 'DELETE'),
    ('accelerator_requests',): ('GET', 'POST', 'PATCH', 'DELETE'),
    ('accelerator_requests', ID): ('GET', 'PATCH', 'DELETE'),
    ('deployables',): ('GET',),
    ('deployables', ID): ('GET',),
    ('deployables', ID, 'program'): ('PATCH',),
    ('devices',): ('GET',),
    ('devices', ID): ('GET',),
    ('devices', ID, 'enable'): ('POST',),
    ('devices', ID, 'disable'): ('POST',),
    ('attributes',): ('GET', 'POST'),
    ('attributes', ID): ('GET', 'DELETE'),
}

# The version documents, also served as JSON "files".
_ROOTS = frozenset({'', '/', '/.json', '/v2', '/v2/', '/v2.json'})
_PREFIX = '/v2/'

JSON_TYPES = frozenset({'application/json', 'application/javascript',
                        'text/javascript'})
_QUERY_SEPARATORS = re.compile('[&;]')
_UTF8 = frozenset({'utf-8', 'utf8'})
# Accept values that admit JSON, without parsing them.
_ACCEPTS_JSON = frozenset({'', '*/*', 'application/json'})


def _allow(methods):
    """The methods for an ``Allow`` header: HEAD wherever GET is."""
    return ', '.join(methods + (('HEAD',) if 'GET' in methods else ()))


def route(path):
    """The methods the API serves at ``path`` (a WSGI ``PATH_INFO``),
    or None where it serves none."""
    if path in _ROOTS:
        return ROUTES[()]
    if path.startswith(_PREFIX):
        path = path[len(_PREFIX) - 1:]
    if path.endswith('/'):
        path = path[:-1]
    segments = path.split('/')[1:]
    if len(segments) > 1:
        segments[1] = ID if segments[1] else ''
    return ROUTES.get(tuple(segments))


def query_error(query):
    """Why the query string is refused, or None: text that is not UTF-8
    or holds a NUL (``lite_common.request_text``), or ``_method``."""
    text, error = request_text.query_text(query)
    if error is not None:
        return error
    if '_method' in text and any(
            urllib.parse.unquote(pair.partition('=')[0]) == '_method'
            for pair in _QUERY_SEPARATORS.split(query)):
        return ('The _method query parameter is not supported: send the '
                'request with its own HTTP method.')
    return None


def _has_body(environ):
    length = environ.get('CONTENT_LENGTH')
    if length:
        try:
            return int(length) > 0
        except ValueError:
            pass
    # No length: the body runs to the end of a chunked stream.
    return bool(environ.get('HTTP_TRANSFER_ENCODING'))


def _media_type_error(content_type):
    """Why a body of ``content_type`` is refused (415), or None."""
    media_type, _, params = content_type.partition(';')
    media_type = media_type.strip().lower()
    if media_type not in JSON_TYPES:
        return ('The request body must be JSON (Content-Type: '
                'application/json), not %s.' % (media_type[:100] or
                                                 repr(content_type[:100])))
    for param in params.split(';'):
        name, _, value = param.partition('=')
        if name.strip().lower() == 'charset' and \
                value.strip().strip('"').lower() not in _UTF8:
            return ('The request body must be JSON in UTF-8, not in %s.'
                    % value.strip()[:50])
    return None


def _accepts_json(accept):
    if accept.strip() in _ACCEPTS_JSON:
        return True
    # An invalid header admits anything, as RFC 9110 allows.
    return bool(acceptparse.create_accept_header(accept).acceptable_offers(
        ['application/json']))


class RequestGuard:
    """Refuses what Pecan must not route (see the module's docstring)."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        status, message, headers = self._check(environ)
        if status is not None:
            return errors.error_response(status, message, headers)(
                environ, start_response)
        if environ['REQUEST_METHOD'] == 'HEAD':
            return self._head(environ, start_response)
        return self.app(environ, start_response)

    def _check(self, environ):
        """(status, message, headers) of the refusal, or Nones."""
        path, error = request_text.path_text(environ.get('PATH_INFO', ''))
        if error is not None:
            return 400, error, ()
        query = environ.get('QUERY_STRING')
        if query:
            error = query_error(query)
            if error is not None:
                return 400, error, ()
        methods = route(path)
        if methods is None:
            return 404, 'The resource could not be found.', ()
        method = environ['REQUEST_METHOD']
        if method not in methods and not (method == 'HEAD' and
                                          'GET' in methods):
            return (405, 'The method is not allowed for this resource.',
                    [('Allow', _allow(methods))])
        accept = environ.get('HTTP_ACCEPT')
        if accept is not None and not _accepts_json(accept):
            return (406, 'The API answers in application/json, which the '
                         'Accept header does not admit.', ())
        if _has_body(environ):
            content_type = environ.get('CONTENT_TYPE')
            if content_type:
                error = _media_type_error(content_type)
                if error is not None:
                    return 415, error, ()
        else:
            environ.pop('CONTENT_TYPE', None)
        return None, None, ()

    def _head(self, environ, start_response):
        """A GET's answer without its body: its headers, Content-Length
        included, as HEAD asks."""
        chunks = self.app(dict(environ, REQUEST_METHOD='GET'),
                          start_response)
        if hasattr(chunks, 'close'):
            chunks.close()
        return []
