"""Requests refused before a handler sees them: a path or query string
that is not UTF-8, or that holds a NUL, is a 400 in Placement's error
format (``lite_common.request_text`` says why).
"""

from lite_common import request_text

from placement_stub import errors


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
    return request_text.request_text_error(environ)


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
