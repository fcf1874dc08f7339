"""Serving the compute API: a small threaded WSGI server.

:class:`APIServer` binds a port (0 picks a free one and :attr:`url`
tells which) and serves from a background thread, one thread per
request, so an event can arrive while a build waits for it.
"""

import logging
import socketserver
import threading
from wsgiref import simple_server

LOG = logging.getLogger(__name__)


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, fmt: str, *args: object) -> None:
        LOG.debug('%s - %s', self.address_string(), fmt % args)


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class APIServer:
    """Serves a WSGI app until :meth:`stop`."""

    def __init__(self, app, host: str = '127.0.0.1', port: int = 0) -> None:
        self._httpd = simple_server.make_server(
            host, port, app, server_class=_ThreadingServer,
            handler_class=_QuietHandler)
        self.host = host
        self.port = self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = '[%s]' % self.host if ':' in self.host else self.host
        return 'http://%s:%d' % (host, self.port)

    def start(self) -> 'APIServer':
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        daemon=True,
                                        name='compute-api-%d' % self.port)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
