"""The built-in WSGI server over real sockets: HTTP/1.1 keep-alive only
when it is safe, request bodies bounded by Content-Length, the errors it
sends itself in the app's envelope, and a stop that closes idle
connections. (Bad framing and slow clients: test_http_framing.py.)"""

import http.client
import json
import socket
import threading
import time

import pytest

from cyborg_lite.api import errors
from lite_common.wsgi_server import WSGIServer


def app(environ, start_response):
    """/echo returns the body it read to EOF; /ignore reads nothing;
    /stream answers without a Content-Length; /boom raises."""
    path = environ['PATH_INFO']
    if path == '/boom':
        raise RuntimeError('boom')
    if path == '/stream':
        start_response('200 OK', [('Content-Type', 'text/plain')])
        return iter([b'part1-', b'part2'])
    body = environ['wsgi.input'].read() if path == '/echo' else b'ignored'
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(body)))])
    return [body]


@pytest.fixture
def server():
    srv = WSGIServer(app).start()
    yield srv
    srv.stop()


def _connect(server):
    sock = socket.create_connection((server.host, server.port), timeout=10)
    return sock


def _request(sock, method, path, body=b'', headers=None,
             version='HTTP/1.1'):
    lines = ['%s %s %s' % (method, path, version), 'Host: localhost']
    if body or method == 'POST':
        lines.append('Content-Length: %d' % len(body))
    lines += ['%s: %s' % item for item in (headers or {}).items()]
    sock.sendall(('\r\n'.join(lines) + '\r\n\r\n').encode() + body)
    resp = http.client.HTTPResponse(sock, method=method)
    resp.begin()
    return resp, resp.read()


def _closed_by_server(sock):
    sock.settimeout(5)
    return sock.recv(1) == b''


def test_one_connection_serves_many_requests(server):
    sock = _connect(server)
    with sock:
        for n in range(3):
            resp, body = _request(sock, 'POST', '/echo', b'body-%d' % n)
            assert resp.status == 200
            assert resp.version == 11
            assert body == b'body-%d' % n
            assert resp.getheader('Connection') is None


def test_an_unread_body_is_drained_before_the_next_request(server):
    sock = _connect(server)
    with sock:
        resp, body = _request(sock, 'POST', '/ignore', b'x' * 100000)
        assert (resp.status, body) == (200, b'ignored')
        resp, body = _request(sock, 'POST', '/echo', b'second')
        assert (resp.status, body) == (200, b'second')


def test_connection_close_is_honoured(server):
    sock = _connect(server)
    with sock:
        resp, body = _request(sock, 'GET', '/ignore',
                              headers={'Connection': 'close'})
        assert resp.status == 200
        assert resp.getheader('Connection') == 'close'
        assert _closed_by_server(sock)


def test_http_1_0_clients_get_one_request_per_connection(server):
    sock = _connect(server)
    with sock:
        resp, body = _request(sock, 'GET', '/ignore', version='HTTP/1.0')
        assert (resp.status, resp.version) == (200, 10)
        assert _closed_by_server(sock)


def test_a_response_without_length_ends_the_connection(server):
    """Chunked, then closed: the client is never left waiting for an
    end it cannot find."""
    sock = _connect(server)
    with sock:
        sock.sendall(b'GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n')
        resp = http.client.HTTPResponse(sock, method='GET')
        resp.begin()
        assert resp.status == 200
        assert resp.getheader('Connection') == 'close'
        assert resp.read() == b'part1-part2'
        assert _closed_by_server(sock)


def test_an_app_error_is_a_500_and_the_server_goes_on(server):
    """A 500 without the traceback; the connection is closed (where the
    app stopped is unknown) and the next one is served."""
    sock = _connect(server)
    with sock:
        resp, body = _request(sock, 'GET', '/boom')
        assert resp.status == 500
        assert b'boom' not in body and b'Traceback' not in body
        assert _closed_by_server(sock)
    sock = _connect(server)
    with sock:
        resp, body = _request(sock, 'POST', '/echo', b'after')
        assert (resp.status, body) == (200, b'after')


def test_a_bad_content_length_is_a_400(server):
    sock = _connect(server)
    with sock:
        sock.sendall(b'POST /echo HTTP/1.1\r\nHost: localhost\r\n'
                     b'Content-Length: nope\r\n\r\n')
        resp = http.client.HTTPResponse(sock, method='POST')
        resp.begin()
        resp.read()
        assert resp.status == 400
        assert _closed_by_server(sock)


def test_headers_reach_the_app_as_wsgi_variables():
    seen = {}

    def show(environ, start_response):
        seen.update(environ)
        start_response('204 No Content', [('Content-Length', '0')])
        return [b'']

    srv = WSGIServer(show).start()
    try:
        sock = _connect(srv)
        with sock:
            sock.sendall(b'POST //v2/x?a=1&b=%20 HTTP/1.1\r\n'
                         b'Host: localhost\r\n'
                         b'Content-Type: application/json\r\n'
                         b'X-Auth-Token:\tsecret \r\n'
                         b'OpenStack-API-Version: accelerator 2.3\r\n'
                         b'X-Twice: one\r\nX-Twice: two\r\n'
                         b'X-Empty:\r\n'
                         b'Content-Length: 2\r\n\r\n{}')
            resp = http.client.HTTPResponse(sock, method='POST')
            resp.begin()
            assert resp.status == 204
        assert seen['REQUEST_METHOD'] == 'POST'
        assert seen['PATH_INFO'] == '/v2/x'
        assert seen['QUERY_STRING'] == 'a=1&b=%20'
        assert seen['SERVER_PROTOCOL'] == 'HTTP/1.1'
        assert seen['CONTENT_TYPE'] == 'application/json'
        assert seen['CONTENT_LENGTH'] == '2'
        assert seen['HTTP_X_AUTH_TOKEN'] == 'secret'
        assert seen['HTTP_OPENSTACK_API_VERSION'] == 'accelerator 2.3'
        assert seen['HTTP_X_TWICE'] == 'one, two'
        assert seen['HTTP_X_EMPTY'] == ''
    finally:
        srv.stop()


def test_expect_100_continue_is_answered_before_the_body(server):
    sock = _connect(server)
    with sock:
        sock.sendall(b'POST /echo HTTP/1.1\r\nHost: localhost\r\n'
                     b'Expect: 100-continue\r\nContent-Length: 4\r\n\r\n')
        assert sock.recv(1024).startswith(b'HTTP/1.1 100 ')
        sock.sendall(b'body')
        resp = http.client.HTTPResponse(sock, method='POST')
        resp.begin()
        assert (resp.status, resp.read()) == (200, b'body')


@pytest.mark.parametrize('raw, status', [
    (b'POST /echo HTTP/1.1\r\nHost: localhost\r\n'
     b'Content-Length: nope\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1 extra\r\n\r\n', 400),
    (b'GET /echo HTTP/1.x\r\n\r\n', 400),
    (b'get /echo HTTP/1.1\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1\r\nNo-Colon-Here\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1\r\nHost : localhost\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1\r\n  folded\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1\r\nX-A: 1\rX-B: 2\r\n\r\n', 400),
    (b'GET /echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n', 501),
    # The request line and headers together: 64 KiB at most.
    (b'GET /' + b'a' * 70000 + b' HTTP/1.1\r\n\r\n', 431),
    (b'GET /echo HTTP/1.1\r\nX-Long: ' + b'a' * 70000 + b'\r\n\r\n', 431),
    (b'GET /echo HTTP/1.1\r\n' + b'X-Many: 1\r\n' * 7000 + b'\r\n', 431),
])
def test_errors_the_server_sends_use_the_apps_envelope(raw, status):
    srv = WSGIServer(app, error_body=errors.envelope).start()
    try:
        sock = _connect(srv)
        with sock:
            sock.sendall(raw)
            resp = http.client.HTTPResponse(sock, method='GET')
            resp.begin()
            body = resp.read()
            assert resp.status == status
            assert resp.getheader('Content-Type') == 'application/json'
            fault = json.loads(json.loads(body)['error_message'])
            assert fault['faultcode'] == ('Client' if status < 500 else
                                          'Server')
            assert fault['faultstring']
            assert _closed_by_server(sock)
    finally:
        srv.stop()


@pytest.mark.parametrize('line', [b'GET /ignore', b'GET /ignore HTTP/9.9'])
def test_requests_of_other_http_versions_get_an_http_1_0_answer(server,
                                                                  line):
    """A request line without a version (HTTP/0.9's) or with one the
    server does not speak is answered in HTTP/1.0, status line and all,
    and the connection is closed."""
    sock = _connect(server)
    with sock:
        sock.sendall(line + b'\r\nHost: localhost\r\n\r\n')
        resp = http.client.HTTPResponse(sock, method='GET')
        resp.begin()
        assert (resp.status, resp.version) == (200, 10)
        assert resp.read() == b'ignored'
        assert _closed_by_server(sock)


def _new_server_threads(before):
    """The server threads (event loop, request threads) started since
    ``before``: other tests' servers may still run."""
    return [t for t in set(threading.enumerate()) - before
            if t.name.startswith(('wsgi-', 'waitress-'))]


def test_stop_closes_idle_keep_alive_connections():
    before = set(threading.enumerate())
    srv = WSGIServer(app).start()
    sock = _connect(srv)
    with sock:
        resp, _ = _request(sock, 'GET', '/ignore')
        assert resp.status == 200
        assert _new_server_threads(before)
        srv.stop()
        assert _closed_by_server(sock)
    # The event loop's thread and the request threads end.
    deadline = time.monotonic() + 10
    while _new_server_threads(before):
        assert time.monotonic() < deadline, threading.enumerate()
        time.sleep(0.01)
