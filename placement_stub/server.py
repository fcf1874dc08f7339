"""placement_stub's HTTP server, shared by the console script and the
fixture: cyborg-lite's built-in server (waitress, see
``lite_common.wsgi_server``) with Placement's error format.

Its event loop reads each request, head and body, before one of
``threads`` threads runs it, so a slow client holds a socket, not a
thread. A request that the server refuses before the app sees it (a
repeated or malformed Content-Length, a bad chunk, a malformed request
line or header, an over-long head, a body cut short or not sent within
the read timeout) is answered in Placement's JSON error format.
"""

import http
import json

from lite_common import wsgi_server
from placement_stub import errors

THREADS = 16


def error_body(status, message):
    """A refusal of the server's own in Placement's error format."""
    return json.dumps({'errors': [{
        'status': status, 'title': http.HTTPStatus(status).phrase,
        'detail': message, 'code': errors.DEFAULT,
        'request_id': None}]}).encode()


class Server(wsgi_server.WSGIServer):
    """Serves ``app`` (``serve_forever``, or ``start`` in a thread) until
    ``stop``, which closes every connection."""

    def __init__(self, app, host, port, threads=THREADS):
        super().__init__(app, host, port, error_body=error_body,
                         threads=threads)
