"""A gunicorn worker that reads each kept-alive connection in its own thread.

    gunicorn -k cyborg_lite.api.gunicorn_worker.ConnectionThreadWorker \\
        --workers 2 --threads 8 'cyborg_lite.api.wsgi:application'

Nova's Cyborg client, the ``openstack`` CLI and openstacksdk keep their
connections to the API open between requests. gunicorn's threaded
worker (``gthread``) parks every such connection in its event loop
between requests, so each request wakes the loop, is handed to a pool
thread, and is handed back to the loop when answered: three thread
hand-offs and a pipe write, about a third of the CPU that gunicorn
spends on a small request (measured with benchmarks/http_probe.py).

This worker gives each connection a thread that reads its requests one
after another, blocking on the socket; the thread that reads a request
runs it. gunicorn's own HTTP parser, WSGI environ, access log, hooks,
limits and heartbeat are used unchanged, and its options keep their
meaning:

* ``--threads``: how many requests the application runs at once (a
  connection's thread waits for a slot once it has read a request head);
* ``--worker-connections``: how many connections the worker holds open;
  past that it stops accepting until one closes;
* ``--keep-alive``: how long an idle connection is kept (0: one request
  per connection);
* ``--graceful-timeout``: on SIGTERM the worker stops accepting,
  answers the requests in flight, serves a request that reaches an idle
  connection within ``STOP_LINGER`` seconds with
  ``Connection: close``, closes the other connections, and waits that
  long at most for all of it.

A request that gunicorn refuses before the application sees it (a
malformed request line or header, an over-long line, too many headers)
is answered in the API's JSON error envelope, as the built-in server
answers it, rather than with gunicorn's HTML page.

A new connection that sends nothing is closed after
``FIRST_REQUEST_TIMEOUT`` seconds, and an idle one after
``--keep-alive``, so idle clients hold threads (not request slots) for
a bounded time. Once a request has begun, its head and body must arrive
within ``READ_TIMEOUT`` seconds, however slowly they trickle, or it
is answered 408. The connection's thread reads the whole body, chunked
or not, before it waits for a request slot, so a slow or stalled client
holds its own thread, never a slot that others need, and the
application never waits on a client: a body shorter than its
Content-Length is answered 400, a bad chunk 400 (gunicorn's own
refusal), a body over ``MAX_BUFFERED_BODY`` bytes 413. After a
refusal the connection is closed gracefully (gunicorn's
``close_graceful``), so that a client still sending gets the answer
rather than a reset. TLS and HTTP/1.x are supported; HTTP/2 is not (use
gthread for that).
"""

import errno
import html
import io
import os
import select
import ssl
import sys
import threading
import time
import warnings
from datetime import datetime

from gunicorn import http
from gunicorn import sock as gsock
from gunicorn import util
from gunicorn.http import body as http_body
from gunicorn.http import wsgi
from gunicorn.workers import base

# gunicorn's master loads this module: as the console scripts do
# (cyborg_lite.cmd), hide oslo.service's warning that eventlet, which
# cyborg-lite never uses, is deprecated.
warnings.filterwarnings('ignore', module='oslo_service')

from cyborg_lite.api import errors  # noqa: E402

# What ``gunicorn --worker-class`` takes to run this worker.
WORKER_CLASS = __name__ + '.ConnectionThreadWorker'
# How long a new connection may take to send its first request head.
FIRST_REQUEST_TIMEOUT = 5.0
# How often a thread waiting for a request looks whether the worker stops.
STOP_CHECK_INTERVAL = 1.0
# How long a stopping worker still waits for a request on an idle
# connection (answered with ``Connection: close``), as gthread does.
STOP_LINGER = 2.0
# How long a request's head and body may take to arrive, from its first
# byte.
READ_TIMEOUT = 5.0
# The largest request body the worker takes (it reads each body before
# the application runs); the API's own limit, ``[api]
# max_request_body_size``, is lower by default.
MAX_BUFFERED_BODY = 1 << 20


def write_error_envelope(sock, status_int, reason, mesg):
    """gunicorn's ``util.write_error``, with the error envelope for body."""
    body = errors.envelope(status_int, mesg or reason)
    head = ('HTTP/1.1 %d %s\r\nConnection: close\r\n'
            'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n'
            % (status_int, reason, len(body)))
    util.write_nonblock(sock, head.encode('latin-1') + body)


class _ErrorAnswerSocket:
    """The client's socket as gunicorn's ``Worker.handle_error`` sees it:
    the error page it writes (``util.write_error``: a status line and an
    HTML page holding the message) is sent as the API's error envelope
    instead; everything else goes to the socket."""

    def __init__(self, sock):
        self._sock = sock

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def sendall(self, data):
        head, _, page = data.partition(b'\r\n\r\n')
        _, status, reason = head.split(b'\r\n', 1)[0].decode(
            'latin-1').split(' ', 2)
        # The message is the page's text between its heading and the
        # end of its body (gunicorn escapes it, so neither tag is in it).
        message = page.decode('latin-1').partition('</h1>')[2]
        message = html.unescape(message.rpartition('</body>')[0]).strip()
        write_error_envelope(self._sock, int(status), reason, message)


class Refused(Exception):
    """A request answered by the worker itself: (status, reason,
    message)."""

    def __init__(self, status, reason, message):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message


class _Connection:
    """One client connection."""

    def __init__(self, client, addr, server_name):
        self.client = client
        self.addr = addr
        self.server_name = server_name
        self.req = None
        self.refused = False  # an error was answered: close gracefully


class _DeadlineSocket:
    """The client's socket as gunicorn's parser reads it: once
    ``deadline`` is set, every read waits until then at most, so a
    request's head and body must arrive by then however slowly they
    trickle."""

    def __init__(self, sock):
        self.sock = sock
        self.deadline = None

    def recv(self, size):
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError('timed out')
            self.sock.settimeout(remaining)
        return self.sock.recv(size)

    # Parser.finish_body bounds its reads through these.
    def gettimeout(self):
        return self.sock.gettimeout()

    def settimeout(self, timeout):
        self.sock.settimeout(timeout)


def _continue(req, sock):
    """Answer ``Expect: 100-continue``: the client waits for it before
    it sends the body. (gunicorn sends another when the application
    runs; a client reads any number of 1xx answers.)"""
    if req.version >= (1, 1) and any(
            name == 'EXPECT' and value.lower() == '100-continue'
            for name, value in req.headers):
        sock.sendall(b'HTTP/1.1 100 Continue\r\n\r\n')


def _too_large():
    return Refused(413, 'Request Entity Too Large',
                   'The request body is larger than %d bytes.'
                   % MAX_BUFFERED_BODY)


def read_body(req, sock):
    """The whole body of ``req``.

    :raises Refused: 400 for a body shorter than its Content-Length, 413
        for one over ``MAX_BUFFERED_BODY``.
    """
    reader = req.body.reader
    if isinstance(reader, http_body.LengthReader):
        expected = reader.length
        if not expected:
            return b''
        if expected > MAX_BUFFERED_BODY:
            raise _too_large()
        _continue(req, sock)
        data = req.body.read(expected)
        if len(data) < expected:
            raise Refused(400, 'Bad Request',
                          'The request body ended after %d of the %d bytes '
                          'its Content-Length announced.' % (len(data),
                                                            expected))
        return data
    _continue(req, sock)
    data = req.body.read(MAX_BUFFERED_BODY + 1)
    if len(data) > MAX_BUFFERED_BODY:
        raise _too_large()
    return data


class ConnectionThreadWorker(base.Worker):
    """A thread per open connection; ``threads`` requests run at once."""

    def init_process(self):
        self._slots = threading.BoundedSemaphore(self.cfg.threads)
        self._lock = threading.Lock()
        self._connections = set()
        self._stopped_at = None
        super().init_process()

    def handle_error(self, req, client, addr, exc):
        """gunicorn's answer to a request it could not serve (its
        status, reason and message, its logs), in the API's envelope."""
        super().handle_error(req, _ErrorAnswerSocket(client), addr, exc)

    # The accept loop (main thread).

    def run(self):
        for listener in self.sockets:
            listener.setblocking(False)
        while self.alive:
            self.notify()
            with self._lock:
                accepting = (len(self._connections) <
                             self.cfg.worker_connections)
            fds = self.wait_fds if accepting else [self.PIPE[0]]
            try:
                ready, _, _ = select.select(fds, [], [], 1.0)
            except OSError as exc:
                if exc.errno != errno.EINTR:
                    raise
                ready = []
            for fd in ready:
                if fd == self.PIPE[0]:
                    self._drain_wakeups()
                else:
                    self._accept(fd)
            if self.ppid != os.getppid():
                self.log.info('Parent changed, shutting down: %s', self)
                self.alive = False
        self._stop_connections()

    def _drain_wakeups(self):
        try:
            while os.read(self.PIPE[0], 64):
                pass
        except OSError:
            pass

    def _accept(self, listener):
        try:
            client, addr = listener.accept()
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.ECONNABORTED,
                             errno.EWOULDBLOCK):
                return
            raise
        client.setblocking(True)
        util.close_on_exec(client)
        conn = _Connection(client, addr, listener.getsockname())
        with self._lock:
            self._connections.add(conn)
        threading.Thread(target=self._serve, args=(conn,), daemon=True,
                         name='connection-%s:%s' % addr[:2]
                         if isinstance(addr, tuple) else 'connection').start()

    def _stop_connections(self):
        """Wait up to the graceful timeout for the connections to end.
        Each closes once it has answered the request it runs and no
        other reached it within ``STOP_LINGER`` seconds of the stop;
        a request read after the stop is answered with
        ``Connection: close``."""
        self._stopped_at = time.monotonic()
        deadline = self._stopped_at + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._connections:
                    break
            self.notify()
            time.sleep(0.05)

    # One connection (its own thread).

    def _serve(self, conn):
        """Serve ``conn`` until it closes; then forget it."""
        try:
            self._serve_requests(conn)
        except Refused as exc:
            conn.refused = True
            self.log.warning('Invalid request from ip=%s: %s',
                             conn.addr[0] if isinstance(conn.addr, tuple)
                             else conn.addr, exc.message)
            try:
                write_error_envelope(conn.client, exc.status, exc.reason,
                                     exc.message)
            except OSError:
                pass
        except http.errors.NoMoreData as exc:
            self.log.debug('Ignored premature client disconnection. %s', exc)
        except StopIteration as exc:
            self.log.debug('Closing connection. %s', exc)
        except ssl.SSLError as exc:
            if exc.args[0] != ssl.SSL_ERROR_EOF:
                self.handle_error(conn.req, conn.client, conn.addr, exc)
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET,
                                 errno.ENOTCONN, errno.EBADF, None):
                self.log.exception('Socket error processing request.')
        except Exception as exc:
            conn.refused = True
            self.handle_error(conn.req, conn.client, conn.addr, exc)
        finally:
            with self._lock:
                self._connections.discard(conn)
            if conn.refused:
                util.close_graceful(conn.client)
            else:
                util.close(conn.client)

    def _serve_requests(self, conn):
        """Read and run ``conn``'s requests one after another, for as
        long as HTTP and the keep-alive timeout allow."""
        if self.cfg.is_ssl:
            conn.client = gsock.ssl_wrap_socket(conn.client, self.cfg)
        source = _DeadlineSocket(conn.client)
        parser = http.get_parser(self.cfg, source, conn.addr)
        timeout = FIRST_REQUEST_TIMEOUT
        while parser.unreader.buf.tell() or self._wait_readable(
                conn.client, timeout):
            source.deadline = time.monotonic() + READ_TIMEOUT
            try:
                conn.req = next(parser)
                if not conn.req:
                    return
                body = read_body(conn.req, conn.client)
            except TimeoutError:
                raise Refused(408, 'Request Timeout',
                              'The request did not arrive in full within '
                              '%d seconds.' % READ_TIMEOUT) from None
            except http.errors.NoMoreData:
                if conn.req is None:
                    raise
                raise Refused(400, 'Bad Request',
                              'The connection ended in the middle of the '
                              'request body.') from None
            finally:
                source.deadline = None
                conn.client.settimeout(None)
            with self._slots:
                keepalive = self._handle_request(conn.req, conn, body)
            if not keepalive or not parser.finish_body(
                    deadline=time.monotonic() + FIRST_REQUEST_TIMEOUT):
                return
            conn.req = None
            timeout = self.cfg.keepalive

    def _wait_readable(self, client, timeout):
        """Whether ``client`` has bytes (or EOF) within ``timeout``
        seconds, or within ``STOP_LINGER`` of the worker's stop."""
        if isinstance(client, ssl.SSLSocket) and client.pending():
            return True
        deadline = time.monotonic() + timeout
        while True:
            if self._stopped_at is not None:
                deadline = min(deadline, self._stopped_at + STOP_LINGER)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            ready, _, _ = select.select(
                [client], [], [], min(remaining, STOP_CHECK_INTERVAL))
            if ready:
                return True

    def _handle_request(self, req, conn, body):
        """Run the application for ``req``, whose ``body`` has been read;
        whether the connection may carry another request. As gunicorn's
        threaded worker does."""
        environ = {}
        resp = None
        try:
            self.cfg.pre_request(self, req)
            request_start = datetime.now()
            resp, environ = wsgi.create(req, conn.client, conn.addr,
                                        conn.server_name, self.cfg)
            environ['wsgi.multithread'] = True
            environ['wsgi.input'] = io.BytesIO(body)
            if body:
                # A chunked body has a length now.
                environ.setdefault('CONTENT_LENGTH', str(len(body)))
            self.nr += 1
            if self.nr >= self.max_requests and self.alive:
                self.log.info('Autorestarting worker after current request.')
                self.alive = False
            if not self.alive or not self.cfg.keepalive:
                resp.force_close()
            respiter = self.wsgi(environ, resp.start_response)
            try:
                if isinstance(respiter, environ['wsgi.file_wrapper']):
                    resp.write_file(respiter)
                else:
                    for item in respiter:
                        resp.write(item)
                resp.close()
            finally:
                self.log.access(resp, req, environ,
                                datetime.now() - request_start)
                if hasattr(respiter, 'close'):
                    respiter.close()
            return not resp.should_close()
        except OSError:
            util.reraise(*sys.exc_info())
        except (Exception, SystemExit):
            if resp and resp.headers_sent:
                self.log.exception('Error handling request')
                raise StopIteration()
            raise
        finally:
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:
                self.log.exception('Exception in post_request hook')
