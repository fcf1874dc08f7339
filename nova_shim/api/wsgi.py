"""Serving the compute API: cyborg-lite's built-in server (waitress, see
``lite_common.wsgi_server``) with Nova's error body.

``APIServer`` binds a port (0 picks a free one and ``url``
tells which) and serves from a background thread. The server reads each
request in full before one of its threads runs it, so an event can
arrive while a build waits for it, and a slow client holds no thread. A
request that the server refuses before the API sees it is answered with
Nova's error body.
"""

import json

from lite_common import wsgi_server

THREADS = 16
# Nova's name for the fault of each status that the server may refuse
# with; any other 4xx is a badRequest.
FAULTS = {413: 'overLimit', 501: 'notImplemented', 500: 'computeFault'}


def error_body(status: int, message: str) -> bytes:
    """A refusal of the server's own as Nova words it."""
    return json.dumps({FAULTS.get(status, 'badRequest'): {
        'code': status, 'message': message}}).encode()


class APIServer(wsgi_server.WSGIServer):
    """Serves a WSGI app until ``stop``, which closes every
    connection."""

    def __init__(self, app, host: str = '127.0.0.1', port: int = 0) -> None:
        super().__init__(app, host, port, error_body=error_body,
                         threads=THREADS)
