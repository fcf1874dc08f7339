"""A small threaded WSGI server for the built-in API servers.

Production runs the API under gunicorn (``cyborg_lite.api.wsgi``); the
all-in-one and the tests use this one, which binds port 0 when asked and
reports the port it got.

It is wsgiref with HTTP/1.1 keep-alive added, because a client such as
Nova's keeps its connection open between requests, and a new connection
per request costs a TCP handshake and a server thread. A connection is
kept only when that is safe: the response carries a Content-Length, the
request's body was read to its end (the server reads what the app left),
and the client did not ask to close. Each response leaves in one send.
Idle connections are closed after ``idle_timeout`` seconds, and
:meth:`WSGIServer.stop` closes every open connection.

A request the server itself refuses before the app sees it (a malformed
request line, header or Content-Length, an over-long URL or header, too
many headers) gets the body that ``error_body(status, message)`` renders,
in the app's own error format; without it, http.server's HTML page.

The request line and headers are parsed here rather than by http.server,
whose header parser is the email package's: general enough for MIME
documents, and a fifth of this server's CPU per request. The limits are
http.client's: lines of 64 KiB, 100 header fields.
"""

import http
import http.client
import logging
import re
import socket
import socketserver
import threading
from wsgiref import simple_server

LOG = logging.getLogger(__name__)

# The most request body that the server reads and discards for the app to
# keep a connection open; past that the connection is closed instead.
MAX_DRAIN = 1 << 20
MAX_LINE = 65536
MAX_HEADERS = 100
_VERSION = re.compile(r'HTTP/(\d{1,10})\.(\d{1,10})\Z')
# RFC 9110 5.1: a field name is a token.
_FIELD_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


class BadRequest(Exception):
    """A request line or header the server refuses: (status, message)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def parse_request_line(line: str) -> tuple[str, str, tuple[int, int]]:
    """``(method, target, (major, minor))`` of an HTTP/1.x request line."""
    words = line.split()
    if len(words) != 3:
        raise BadRequest(http.HTTPStatus.BAD_REQUEST,
                         'Bad request syntax (%r)' % line[:200])
    method, target, version = words
    match = _VERSION.match(version)
    if match is None:
        raise BadRequest(http.HTTPStatus.BAD_REQUEST,
                         'Bad request version (%r)' % version[:50])
    number = int(match.group(1)), int(match.group(2))
    if number >= (2, 0):
        raise BadRequest(http.HTTPStatus.HTTP_VERSION_NOT_SUPPORTED,
                         'Invalid HTTP version (%s)' % version[5:])
    return method, target, number


def read_headers(rfile) -> http.client.HTTPMessage:
    """The header fields up to the empty line, as http.server gives them.

    A line without a colon, a field name that is not a token (no space
    before the colon) and an obsolete folded line are refused (RFC 9112
    5.1 and 5.2 allow a 400 for each).
    """
    headers = http.client.HTTPMessage()
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise BadRequest(
                http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                'Line too long')
        if line in (b'\r\n', b'\n', b''):
            return headers
        if len(headers) == MAX_HEADERS:
            raise BadRequest(
                http.HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                'Too many headers')
        name, colon, value = line.decode('iso-8859-1').partition(':')
        if not colon or not _FIELD_NAME.match(name):
            raise BadRequest(http.HTTPStatus.BAD_REQUEST,
                             'Bad header line (%r)' % line[:100])
        headers[name] = value.strip(' \t\r\n')


class _RequestBody:
    """``wsgi.input`` that ends at the request's Content-Length, so that
    an app that reads to EOF does not wait for the client's next
    request."""

    def __init__(self, rfile, length):
        self._rfile = rfile
        self.remaining = length

    def read(self, size=-1):
        if size is None or size < 0 or size > self.remaining:
            size = self.remaining
        data = self._rfile.read(size) if size else b''
        self.remaining -= len(data)
        if len(data) < size:
            self.remaining = 0  # the client went away mid-body
        return data

    def readline(self, size=-1):
        if size is None or size < 0 or size > self.remaining:
            size = self.remaining
        data = self._rfile.readline(size) if size else b''
        self.remaining -= len(data)
        return data

    def readlines(self, hint=-1):
        return list(iter(self.readline, b''))

    def __iter__(self):
        return iter(self.readline, b'')

    def drain(self):
        """Read what the app left; False if too much remains to bother."""
        if self.remaining > MAX_DRAIN:
            return False
        while self.remaining:
            if not self.read(min(self.remaining, 65536)):
                return False
        return True


class _ResponseWriter(simple_server.ServerHandler):
    """Answers HTTP/1.1 clients in HTTP/1.1 and sends each response's
    status line, headers and body in one write."""

    keep_alive = False
    complete = False  # the whole response went out

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._pending = []

    def finish_content(self):
        super().finish_content()
        self.complete = True

    def cleanup_headers(self):
        super().cleanup_headers()
        self.keep_alive = (self.keep_alive and
                           'Content-Length' in self.headers)
        if not self.keep_alive:
            self.headers['Connection'] = 'close'

    def _write(self, data):
        self._pending.append(data)

    def _flush(self):
        if self._pending:
            data, self._pending = b''.join(self._pending), []
            self.stdout.write(data)
            self.stdout.flush()


class _Handler(simple_server.WSGIRequestHandler):
    protocol_version = 'HTTP/1.1'
    idle_timeout = 60

    def log_message(self, fmt, *args):
        LOG.debug('%s - %s', self.address_string(), fmt % args)

    def setup(self):
        self.timeout = self.idle_timeout
        super().setup()
        # Without TCP_NODELAY, Nagle's algorithm and the client's delayed
        # ACK can hold a response back by up to 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY,
                                   1)
        self.server.track(self.connection)

    def finish(self):
        self.server.untrack(self.connection)
        super().finish()

    def send_error(self, code, message=None, explain=None):
        render = self.server.error_body
        if render is None:
            return super().send_error(code, message, explain)
        message = message or self.responses.get(code, ('Error',))[0]
        self.log_error('code %d, message %s', code, message)
        # A request line too broken to name its version would get an
        # HTTP/0.9 answer (a body without a status line): answer in ours.
        self.request_version = self.protocol_version
        body = render(code, message)
        self.send_response(code, message)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Connection', 'close')
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(body)

    def parse_request(self):
        """Parse ``raw_requestline`` and the headers into ``command``,
        ``path``, ``request_version`` and ``headers``, as http.server
        does; False once an error has been sent (or for an empty line,
        which closes the connection)."""
        self.command = None
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline,
                               'iso-8859-1').rstrip('\r\n')
        if not self.requestline.strip():
            return False
        try:
            self.command, self.path, version = parse_request_line(
                self.requestline)
            self.request_version = 'HTTP/%d.%d' % version
            self.headers = read_headers(self.rfile)
        except BadRequest as exc:
            self.send_error(exc.status, exc.message)
            return False
        if self.path.startswith('//'):
            self.path = '/' + self.path.lstrip('/')
        connection = self.headers.get('Connection', '').lower()
        self.close_connection = (version < (1, 1) or connection == 'close'
                                 ) and connection != 'keep-alive'
        if self.headers.get('Expect', '').lower() == '100-continue' and \
                version >= (1, 1):
            return self.handle_expect_100()
        return True

    def handle(self):
        self.close_connection = True
        try:
            while self._handle_one():
                pass
        except (OSError, ValueError):
            # The client left, the idle timeout passed, or stop() closed
            # the socket under us (ValueError: I/O on a closed file).
            pass

    def _handle_one(self):
        """Serve one request; True when the connection may serve the
        next."""
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            return False
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ''
            self.send_error(414)
            return False
        if not self.parse_request():  # it has sent the error
            return False
        environ = self.get_environ()
        chunked = 'chunked' in self.headers.get('Transfer-Encoding',
                                                '').lower()
        try:
            length = int(self.headers.get('Content-Length') or 0)
        except ValueError:
            self.send_error(400, 'Bad Content-Length')
            return False
        body = _RequestBody(self.rfile, max(length, 0))
        writer = _ResponseWriter(body, self.wfile, self.get_stderr(),
                                 environ, multithread=True)
        writer.request_handler = self  # wsgiref logs through it
        if self.request_version == 'HTTP/1.1':
            writer.http_version = '1.1'
        writer.keep_alive = (not self.close_connection and not chunked and
                             not self.server.stopping)
        writer.run(self.server.get_app())
        return writer.keep_alive and writer.complete and body.drain()


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, *args, **kwargs):
        self.stopping = False
        self.error_body = None
        self._connections = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def track(self, connection):
        with self._connections_lock:
            self._connections.add(connection)

    def untrack(self, connection):
        with self._connections_lock:
            self._connections.discard(connection)

    def close_connections(self):
        """Wake every connection's thread by shutting its socket down."""
        self.stopping = True
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class WSGIServer:
    """Serves a WSGI app from a background thread until :meth:`stop`.

    ``error_body(status, message) -> bytes`` renders, as JSON, the errors
    that the server sends itself (see the module's docstring).
    """

    def __init__(self, app, host='127.0.0.1', port=0, error_body=None):
        self._server = simple_server.make_server(
            host, port, app, server_class=_ThreadingServer,
            handler_class=_Handler)
        self._server.error_body = error_body
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
        self._server.close_connections()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
