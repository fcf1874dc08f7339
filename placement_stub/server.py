"""A threaded wsgiref server, shared by the console script and fixture."""

import socketserver
from wsgiref import simple_server


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(host, port, app, quiet=True):
    handler = _QuietHandler if quiet else simple_server.WSGIRequestHandler
    return simple_server.make_server(host, port, app,
                                     server_class=_ThreadingServer,
                                     handler_class=handler)


def url(httpd) -> str:
    host, port = httpd.server_address[:2]
    if ':' in host:
        host = '[%s]' % host
    return 'http://%s:%d' % (host, port)
