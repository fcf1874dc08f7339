"""The built-in API server: waitress in a background thread.

Production runs the API under gunicorn (``cyborg_lite.api.wsgi``); the
all-in-one, ``cyborg-lite-api``, ``placement-stub-api``, nova_shim's
compute API and the tests use this one, which binds port 0 when asked
and reports the port it got. Each names the error format of its own
API (``error_body``).

waitress parses HTTP. Its event loop thread reads every connection,
request head and body alike, and hands a request to one of ``threads``
worker threads only once all of it has arrived, so a slow or stalled
client holds a socket, never a thread that other clients need. It
refuses what HTTP/1.1 refuses (a repeated or malformed Content-Length, a
bad chunk size, a malformed request line or header), decodes chunked
bodies, keeps connections alive when that is safe, and closes a
connection that has been silent for ``read_timeout`` seconds, whether
between requests or in the middle of one.

waitress takes a request with both a Content-Length and a chunked
Transfer-Encoding (the chunks win), and a Transfer-Encoding given twice;
a front end that reads the other length would see another request in
the bytes that follow. Such a head is refused here before its body is
read (400), and the connection closed, as RFC 9112 (6.1, 6.3) asks:
``framing_refusal``. So is a head with more than
``MAX_HEADER_FIELDS`` fields (431), as gunicorn limits them.

What this wrapper adds is the interface the callers use: a port
reported after binding, ``WSGIServer.start`` in a thread,
``WSGIServer.stop`` closing every connection, the request-body
limit, and quiet logs. A request the server refuses before the app sees
it is answered with the body that ``error_body(status, message)``
renders, in the app's own error format (waitress's plain-text page
otherwise).
"""

import logging
import socket
import threading
import time

from waitress import adjustments
from waitress import channel as waitress_channel
from waitress import parser as waitress_parser
from waitress import server as waitress_server
from waitress import task as waitress_task
from waitress import utilities

LOG = logging.getLogger(__name__)

# Seconds a connection may stay silent, mid-request or between requests.
READ_TIMEOUT = 5
# Requests the app runs at once. Each API request waits for a conductor
# while it runs; more of them in flight batch better.
THREADS = 32
# The largest request head (the request line and every header field).
MAX_HEADER_SIZE = 65536
# The most header fields a request may carry (gunicorn's default).
MAX_HEADER_FIELDS = 100
# The largest request body read when the caller names no limit.
MAX_BODY_SIZE = 1 << 20
# Connections held open at once; past that the server stops accepting.
CONNECTION_LIMIT = 1000
# After refusing a request, how long (seconds) and how much (bytes) the
# server reads and drops what the client still sends before it closes.
LINGER = 2.0
LINGER_BYTES = 65536


class TooManyHeaderFields(utilities.RequestHeaderFieldsTooLarge):
    """A head with more than MAX_HEADER_FIELDS fields (431)."""


class AmbiguousFraming(utilities.BadRequest):
    """A head whose body length cannot be known for sure (400)."""


def framing_refusal(header_plus):
    """The refusal of a request head (the request line and its header
    lines, as waitress hands them over) whose framing is ambiguous or
    that has too many fields, or None:

    * more than MAX_HEADER_FIELDS header fields: 431;
    * Transfer-Encoding with Content-Length, Transfer-Encoding given in
      more than one field, ``chunked`` applied twice, or
      Transfer-Encoding in an HTTP/1.0 request: 400.

    A head waitress cannot parse at all is left to waitress (None).
    """
    request_line, _sep, header = header_plus.partition(b'\r\n')
    try:
        lines = waitress_parser.get_header_lines(header)
    except waitress_parser.ParsingError:
        return None
    if len(lines) > MAX_HEADER_FIELDS:
        return TooManyHeaderFields(
            'The request has %d header fields; at most %d are accepted.'
            % (len(lines), MAX_HEADER_FIELDS))
    fields = {}
    for line in lines:
        name, _colon, value = line.partition(b':')
        fields.setdefault(name.lower(), []).append(value.strip(b' \t'))
    encodings = fields.get(b'transfer-encoding')
    if not encodings:
        return None
    if len(encodings) > 1:
        return AmbiguousFraming('Transfer-Encoding is given more than once; '
                                'a request has one.')
    if b'content-length' in fields:
        return AmbiguousFraming('The request has both a Content-Length and '
                                'a Transfer-Encoding: its body length is '
                                'ambiguous.')
    codings = [c.strip(b' \t').lower() for c in encodings[0].split(b',')]
    if codings.count(b'chunked') > 1:
        return AmbiguousFraming('Transfer-Encoding applies chunked more '
                                'than once.')
    if request_line.rstrip().endswith(b'HTTP/1.0'):
        return AmbiguousFraming('An HTTP/1.0 request has no '
                                'Transfer-Encoding.')
    return None


class _RequestParser(waitress_parser.HTTPRequestParser):
    """waitress's parser, which refuses a head that
    ``framing_refusal`` refuses before it reads any of the body."""

    refusal = None

    def parse_header(self, header_plus):
        refusal = framing_refusal(header_plus)
        if refusal is None:
            return super().parse_header(header_plus)
        # The request line alone: the answer's method and version, and
        # no body to read.
        request_line = header_plus.partition(b'\r\n')[0]
        super().parse_header(request_line + b'\r\n')
        self.refusal = refusal
        return None

    def received(self, data):
        consumed = super().received(data)
        if self.refusal is not None and self.error is None:
            self.error = self.refusal
            self.completed = True
        return consumed


def _message(request, error):
    """What is wrong with a refused request, in words for its client.

    waitress says only "Content-Length is invalid" of a Content-Length
    that is repeated, negative or not a number; say which.
    """
    length = request.headers.get('CONTENT_LENGTH')
    if isinstance(error, (TooManyHeaderFields, AmbiguousFraming)):
        return error.body
    if isinstance(error, utilities.RequestEntityTooLarge):
        return 'The request body is larger than the %d bytes accepted.' % (
            request.adj.max_request_body_size - 1)
    if isinstance(error, utilities.RequestHeaderFieldsTooLarge):
        return ('The request line and headers are larger than the %d '
                'bytes accepted.' % request.adj.max_request_header_size)
    if error.body == 'Content-Length is invalid' and length is not None:
        if ',' in length:
            return ('Content-Length is given more than once (%s); a request '
                    'has one body length.' % length[:100])
        if length.strip().startswith('-'):
            return 'Content-Length %s is negative.' % length[:100]
        return 'Content-Length %r is not a number of bytes.' % length[:100]
    return error.body


class _ErrorTask(waitress_task.ErrorTask):
    """Answers a refused request with the server's ``error_body``."""

    def execute(self):
        self.channel.linger = True
        render = self.channel.server.error_body
        if render is None:
            return super().execute()
        error = self.request.error
        body = render(error.code, _message(self.request, error))
        self.status = '%d %s' % (error.code, error.reason)
        self.response_headers.append(('Content-Type', 'application/json'))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _WSGITask(waitress_task.WSGITask):
    """waitress's task, which sends the head of an answer and a body that
    comes whole (the API's answers do) in one write rather than two, and
    sends no body in answer to HEAD, whatever the app gives."""

    def write(self, data):
        if self.request.command == 'HEAD':
            data = b''
        if (self.wrote_header or not data or not self.has_body or
                self.content_length != len(data) or not self.complete):
            return super().write(data)
        head = self.build_response_header()
        self.wrote_header = True
        self.content_bytes_written = len(data)
        self.channel.write_soon(head + data)

    def finish(self):
        if self.request.command == 'HEAD':
            # Not even the end of a chunked body.
            self.chunked_response = False
        super().finish()


class RequestTimeout(utilities.BadRequest):
    code = 408
    reason = 'Request Timeout'


class _Channel(waitress_channel.HTTPChannel):
    """A connection that answers a request it gets only in part, and
    closes gracefully after a refusal.

    waitress closes a connection that goes silent or ends in the middle
    of a request without a word; this one answers 408 to the first and
    400 to the second (a client that half-closes can still read).

    A refused request may leave bytes that its client is still sending
    (the body of a 413, the rest of an over-long head). Closing a socket
    with unread bytes resets the connection, and the client may lose the
    answer with it; so after a refusal the channel sends FIN, then reads
    and drops what arrives until the client closes, for ``LINGER``
    seconds and ``LINGER_BYTES`` bytes at most (RFC 9112 9.6), as
    gunicorn does.
    """

    parser_class = _RequestParser
    task_class = _WSGITask
    error_task_class = _ErrorTask
    linger = False  # set by the error task, read by handle_close
    linger_until = None  # monotonic time; set while lingering
    lingered = 0

    def refuse_partial(self, error):
        """Answer the request that has arrived in part with ``error``;
        False if there is none."""
        with self.requests_lock:
            request = self.request
            if request is None or request.completed or self.requests:
                return False
            request.error = error
            request.completed = True
            self.request = None
            self.requests.append(request)
            self.server.add_task(self)
        return True

    def writable(self):
        # While a request runs, its own thread sends what it writes
        # (send_bytes is 1), and HTTPChannel.handle_write can only try
        # the lock that thread holds; yet the channel asks for write
        # events whenever a byte waits, and the event loop then spins,
        # holding the interpreter lock the request's thread needs, up
        # to a hundred times per request. The loop has to send for the
        # thread only when the thread waits for the buffer to drain.
        if (self.requests and not (self.will_close or
                                   self.close_when_flushed) and
                self.total_outbufs_len <= self.adj.outbuf_high_watermark):
            return False
        return super().writable()

    def handle_read(self):
        if self.linger_until is not None:
            return self._drain()
        try:
            data = self.socket.recv(self.adj.recv_bytes)
        except OSError:
            return self.close_now()
        if data:
            self.last_activity = time.time()
            self.received(data)
        elif not self.refuse_partial(utilities.BadRequest(
                'The connection ended in the middle of the request (a body '
                'shorter than its Content-Length?).')):
            self.close_now()

    def handle_close(self):
        if not self.linger or self.linger_until is not None:
            return self.close_now()
        try:
            self.socket.shutdown(socket.SHUT_WR)
        except OSError:
            return self.close_now()
        self.linger_until = time.monotonic() + LINGER
        # Readable and not writable from now on (see HTTPChannel): the
        # answer went out, and no request is left.
        self.will_close = self.close_when_flushed = False

    def close_now(self):
        self.linger_until = self.linger_until or 0.0
        super().handle_close()

    def _drain(self):
        try:
            data = self.socket.recv(LINGER_BYTES)
        except OSError:
            data = b''
        self.lingered += len(data)
        if (not data or self.lingered >= LINGER_BYTES or
                time.monotonic() >= self.linger_until):
            self.close_now()


class _Server(waitress_server.TcpWSGIServer):
    channel_class = _Channel
    error_body = None

    def maintenance(self, now):
        cutoff = now - self.adj.channel_timeout
        for channel in list(self.active_channels.values()):
            if channel.linger_until:
                # A lingering client that sends nothing more.
                if channel.linger_until <= time.monotonic():
                    channel.close_now()
            elif channel.last_activity < cutoff:
                channel.refuse_partial(RequestTimeout(
                    'The request did not arrive in full within %d seconds.'
                    % self.adj.channel_timeout))
        # Closes the idle connections (those with no request).
        super().maintenance(now)


class WSGIServer:
    """Serves a WSGI app from a background thread until ``stop``.

    ``error_body(status, message) -> bytes`` renders, as JSON, the errors
    that the server sends itself (see the module's docstring).
    ``max_body_size`` is the largest request body read; a larger one is
    refused with 413 before any of it is read.
    """

    def __init__(self, app, host='127.0.0.1', port=0, error_body=None,
                 threads=THREADS, read_timeout=READ_TIMEOUT,
                 max_body_size=MAX_BODY_SIZE):
        adj = adjustments.Adjustments(
            host=host, port=port, threads=threads,
            channel_timeout=read_timeout,
            # Look for silent connections every second, not every 30.
            cleanup_interval=1,
            max_request_header_size=MAX_HEADER_SIZE,
            # waitress refuses a body of this size and more.
            max_request_body_size=max_body_size + 1,
            connection_limit=CONNECTION_LIMIT,
            # poll(), unlike select(), takes file descriptors past 1023.
            asyncore_use_poll=True,
            # A client that goes away is no error of the server's.
            log_socket_errors=False,
            # Pass Forwarded and X-Forwarded-* on to the app, as gunicorn
            # does, rather than drop them on every request.
            clear_untrusted_proxy_headers=False)
        try:
            self._server = _Server(app, adj=adj, sockinfo=adj.listen[0])
        except OSError as exc:
            # Say which address: the caller may run several servers.
            raise OSError(exc.errno, '%s: %s:%d' % (
                exc.strerror, host, port)) from exc
        self._server.error_body = error_body
        self.app = app
        self.host = host
        self.port = int(self._server.effective_port)
        self._thread = None
        self._stop_lock = threading.Lock()

    @property
    def url(self):
        host = '[%s]' % self.host if ':' in self.host else self.host
        return 'http://%s:%d' % (host, self.port)

    def start(self):
        self._thread = threading.Thread(target=self._server.run,
                                        daemon=True,
                                        name='wsgi-%d' % self.port)
        self._thread.start()
        return self

    def serve_forever(self):
        self._server.run()

    def _close_all(self):
        """Close the listening socket, every connection and the event
        loop's wake-up pipe; runs in the event loop's thread, whose loop
        then ends."""
        # stop() has written its wake-up byte by the time it lets go;
        # the loop may run this sooner, woken by a request's thread.
        with self._stop_lock:
            for channel in list(self._server.active_channels.values()):
                channel.close_now()
            self._server.close()

    def stop(self):
        if self._thread is not None and self._thread.is_alive():
            # Queue _close_all and wake the loop with one byte, before
            # _close_all can close the pipe that byte goes to.
            with self._stop_lock:
                self._server.trigger.pull_trigger(self._close_all)
            self._thread.join(timeout=5)
        else:
            self._close_all()
        # The app's threads end once their requests are answered.
        self._server.task_dispatcher.shutdown(timeout=5)
