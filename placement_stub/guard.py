"""Requests refused before a handler sees them: a path or query string
that is not UTF-8, or that holds a NUL, is a 400.

WebOb raises ``UnicodeDecodeError`` when it decodes a path or query
that is not UTF-8 (overlong forms and encoded surrogates included),
which would leave as a 500; and PostgreSQL refuses a NUL in any text
column, so a NUL in a name, a uuid or a filter would fail in the
database. Both are the client's mistake, answered in Placement's error
format before anything reads the request.
"""

import urllib.parse

from placement_stub import errors


def _path_error(path):
    try:
        text = path.encode('latin-1').decode('utf-8')
    except UnicodeError:
        return 'The path is not valid UTF-8.'
    if '\x00' in text:
        return 'The path holds a NUL character (%00).'
    return None


def _query_error(query):
    """Decoded as WebOb decodes it: bytes (latin-1 in the environ), ``+``
    for a space, percent escapes, then UTF-8."""
    try:
        text = urllib.parse.unquote_to_bytes(
            query.encode('latin-1').replace(b'+', b' ')).decode('utf-8')
    except UnicodeError:
        return 'The query string is not valid UTF-8.'
    if '\x00' in text:
        return 'The query string holds a NUL character (%00).'
    return None


def _as_wsgi_bytes(environ):
    """PATH_INFO as PEP 3333 has it (bytes as latin-1): a host that calls
    the app in-process (wsgi-intercept, as gabbi does) may pass text that
    is decoded already, which WebOb cannot read."""
    path = environ.get('PATH_INFO', '')
    try:
        path.encode('latin-1')
    except UnicodeEncodeError:
        environ['PATH_INFO'] = path.encode(
            'utf-8', 'surrogatepass').decode('latin-1')


def request_error(environ):
    """Why the request's path or query string is refused, or None."""
    _as_wsgi_bytes(environ)
    error = _path_error(environ.get('PATH_INFO', ''))
    if error is None and environ.get('QUERY_STRING'):
        error = _query_error(environ['QUERY_STRING'])
    return error


class RequestGuard:
    """400 for the requests ``request_error`` refuses."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        error = request_error(environ)
        if error is None:
            return self.app(environ, start_response)
        environ['HTTP_ACCEPT'] = 'application/json'
        return errors.bad_request(error)(environ, start_response)
