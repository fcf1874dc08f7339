"""A small threaded WSGI server for the built-in API servers.

Production runs the API under gunicorn (``cyborg_lite.api.wsgi``); the
all-in-one and the tests use this one, which binds port 0 when asked and
reports the port it got.
"""

import logging
import socket
import socketserver
import threading
from wsgiref import simple_server

LOG = logging.getLogger(__name__)


class _QuietHandler(simple_server.WSGIRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        LOG.debug('%s - %s', self.address_string(), fmt % args)

    def setup(self):
        super().setup()
        # wsgiref writes the status line, headers and body in separate
        # sends; without TCP_NODELAY, Nagle's algorithm and the client's
        # delayed ACK hold each response back by up to 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,
                                   1)

    def handle(self):
        # wsgiref answers one request per connection; keep-alive would
        # need a full HTTP/1.1 server, so tell clients to close.
        self.close_connection = True
        super().handle()


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


class WSGIServer:
    """Serves a WSGI app from a background thread until :meth:`stop`."""

    def __init__(self, app, host='127.0.0.1', port=0):
        handler = _QuietHandler
        handler.protocol_version = 'HTTP/1.0'
        self._server = simple_server.make_server(
            host, port, app, server_class=_ThreadingServer,
            handler_class=handler)
        self.host = host
        self.port = self._server.server_address[1]
        self._thread = None

    @property
    def url(self):
        return 'http://%s:%d' % (self.host, self.port)

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True, name='wsgi-%d' %
                                        self.port)
        self._thread.start()
        return self

    def serve_forever(self):
        self._server.serve_forever()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
