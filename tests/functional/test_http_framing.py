"""Bad HTTP framing and slow clients, against every server the project
runs, over real sockets.

* ``api``: ``cyborg-lite-api`` (the built-in server) on the real API;
* ``api-gunicorn``: the real API under gunicorn with cyborg-lite's
  worker, as production runs it (with gunicorn_h1c, gunicorn's C
  parser, which gunicorn uses when it is installed);
* ``api-gunicorn-python-parser``: the same with gunicorn's Python
  parser (``--http-parser python``; gunicorn without gunicorn_h1c);
* ``placement``: ``placement-stub-api`` on the real stub;
* ``compute``: nova_shim's compute API server.

Each case is answered with a 4xx in the server's own error format (JSON)
within a few seconds, and closes the connection where HTTP leaves the
rest of the stream unknowable; nothing waits for a client.
"""

import contextlib
import dataclasses
import http.client
import os
import socket
import threading
import time
import urllib.parse

import pytest

from cyborg_lite.api import gunicorn_worker
from lite_common import wsgi_server
from nova_shim.api import wsgi as compute_wsgi
from tests.fixtures import processes
from tests.fixtures import wsgi_probe

# Every server gives up on a silent client after this many seconds.
READ_TIMEOUT = wsgi_server.READ_TIMEOUT
assert gunicorn_worker.READ_TIMEOUT == READ_TIMEOUT

CYBORG_CONF = """
[DEFAULT]
transport_url = cyborg-local://
[api]
host_ip = 127.0.0.1
port = 0
auth_strategy = noauth
"""

PLACEMENT_CONF = """
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///%s
[placement]
sync_on_startup = true
"""


@dataclasses.dataclass
class Target:
    host: str
    port: int
    post_path: str     # a path that takes a POST body
    kind: str = ''     # the server, as the fixture names it


def _address(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


@contextlib.contextmanager
def _serve(kind, tmp):
    if kind == 'compute':
        srv = compute_wsgi.APIServer(wsgi_probe.application).start()
        try:
            yield Target(srv.host, srv.port, '/echo', kind)
        finally:
            srv.stop()
        return
    group = processes.ProcessGroup(tmp)
    try:
        if kind == 'placement':
            conf = os.path.join(tmp, 'placement.conf')
            with open(conf, 'w') as f:
                f.write(PLACEMENT_CONF % os.path.join(tmp, 'p.sqlite'))
            proc = group.start('placement', processes.script(
                'placement-stub-api') + ['--config-file', conf, '--host',
                                         '127.0.0.1', '--port', '0'])
            url = proc.wait_for_line(r'serving on (http://\S+)').group(1)
            yield Target(*_address(url), '/resource_providers', kind)
            return
        conf = os.path.join(tmp, 'cyborg.conf')
        with open(conf, 'w') as f:
            f.write(CYBORG_CONF)
        if kind == 'api':
            proc = group.start('api', processes.script('cyborg-lite-api') +
                               ['--config-file', conf])
            url = proc.wait_for_line(r'listening on (http://\S+)').group(1)
        else:
            parser = 'python' if kind.endswith('python-parser') else 'fast'
            proc = group.start('api-gunicorn', processes.script('gunicorn') + [
                '--worker-class', gunicorn_worker.WORKER_CLASS,
                '--workers', '1', '--threads', '4', '--http-parser', parser,
                '--bind', '127.0.0.1:0', '--no-control-socket',
                'cyborg_lite.api.wsgi:application'],
                env={'CYBORG_LITE_CONFIG_FILES': conf})
            url = proc.wait_for_line(r'Listening at: (http://\S+)').group(1)
            proc.wait_for_line(r'Booting worker')
        proc.wait_for_http(url + '/')
        yield Target(*_address(url), '/v2/device_profiles', kind)
    finally:
        group.stop_all()
        assert not group.leftovers()


@pytest.fixture(scope='module',
                params=['api', 'api-gunicorn', 'api-gunicorn-python-parser',
                        'placement', 'compute'])
def target(request, tmp_path_factory):
    with _serve(request.param, str(tmp_path_factory.mktemp('framing'))) as t:
        yield t


def _connect(target):
    return socket.create_connection((target.host, target.port), timeout=15)


def _read_answers(sock):
    """Every answer on ``sock`` until the server closes it, as
    (status, headers, body)."""
    answers = []
    while True:
        resp = http.client.HTTPResponse(sock, method='POST')
        try:
            resp.begin()
        except http.client.RemoteDisconnected:
            return answers
        answers.append((resp.status, resp.getheader('Content-Type'),
                        resp.read()))
        if resp.will_close:
            assert sock.recv(1) == b''
            return answers


def _head(target, path, length, extra=''):
    return ('POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json'
            '\r\n%sContent-Length: %s\r\n\r\n'
            % (path, extra, length)).encode()


def _refused(answers, *statuses):
    """One answer, a 4xx of ``statuses`` in JSON; the connection closed
    after it."""
    assert len(answers) == 1, answers
    status, content_type, body = answers[0]
    assert status in statuses, answers
    assert content_type.startswith('application/json'), answers
    assert b'Traceback' not in body


def test_two_content_lengths_are_refused_and_nothing_after_is_read(target):
    """The request smuggling pattern: which length is right is unknown,
    so nothing on the connection is trusted."""
    with _connect(target) as sock:
        smuggled = b'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
        sock.sendall(_head(target, target.post_path, 2,
                           'Content-Length: %d\r\n' % (2 + len(smuggled))) +
                     b'{}' + smuggled)
        _refused(_read_answers(sock), 400)


@pytest.mark.parametrize('length', ['99999999999999999999999999', '-1',
                                    '1e3', '0x10'])
def test_a_content_length_that_is_no_byte_count_is_refused(target, length):
    with _connect(target) as sock:
        sock.sendall(_head(target, target.post_path, length) + b'{}')
        _refused(_read_answers(sock), 400, 413)


def test_a_bad_chunk_size_is_400(target):
    with _connect(target) as sock:
        sock.sendall(('POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: '
                      'application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
                      'zz\r\n{}\r\n0\r\n\r\n' % target.post_path).encode())
        _refused(_read_answers(sock), 400)


def test_head_gets_a_status_line_and_no_body(target):
    with _connect(target) as sock:
        sock.sendall(b'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close'
                     b'\r\n\r\n')
        resp = http.client.HTTPResponse(sock, method='HEAD')
        resp.begin()
        assert resp.status < 500
        assert resp.read() == b''
        assert sock.recv(1) == b''


def test_a_body_cut_short_is_400_at_once(target):
    """The client sends part of its body and ends its side."""
    with _connect(target) as sock:
        sock.sendall(_head(target, target.post_path, 100) + b'{"a": 1')
        sock.shutdown(socket.SHUT_WR)
        started = time.monotonic()
        _refused(_read_answers(sock), 400)
        assert time.monotonic() - started < READ_TIMEOUT


def test_a_stalled_body_is_408_after_the_read_timeout(target):
    with _connect(target) as sock:
        sock.sendall(_head(target, target.post_path, 100) + b'{"a": 1')
        started = time.monotonic()
        _refused(_read_answers(sock), 408)
        assert time.monotonic() - started < READ_TIMEOUT + 3


def test_slow_clients_do_not_starve_the_others(target):
    """Two hundred clients that stall in the middle of a head or a body, then
    one that asks properly: it is answered at once."""
    stalled = []
    try:
        for n in range(200):
            sock = _connect(target)
            if n % 2:
                sock.sendall(b'POST %s HTTP/1.1\r\nHost: x\r\nContent-Len'
                             % target.post_path.encode())
            else:
                sock.sendall(_head(target, target.post_path, 100) + b'{')
            stalled.append(sock)
        done = threading.Event()
        statuses = []

        def ask():
            with _connect(target) as sock:
                sock.sendall(b'GET / HTTP/1.1\r\nHost: x\r\nConnection: '
                             b'close\r\n\r\n')
                statuses.extend(a[0] for a in _read_answers(sock))
            done.set()

        threading.Thread(target=ask, daemon=True).start()
        assert done.wait(READ_TIMEOUT - 1), 'starved behind stalled clients'
        assert statuses == [200]
    finally:
        for sock in stalled:
            sock.close()


# What a front end that trusts the other length would take for a second
# request: the server must never answer it.
SMUGGLED = b'GET / HTTP/1.1\r\nHost: x\r\n\r\n'


def _chunked_head(target, *fields, version='1.1'):
    return ('POST %s HTTP/%s\r\nHost: x\r\nContent-Type: application/json'
            '\r\n%s\r\n' % (target.post_path, version,
                            ''.join(f + '\r\n' for f in fields))).encode()


@pytest.mark.parametrize('encoding', ['chunked', 'CHUNKED', '  chunked'])
def test_a_content_length_beside_a_transfer_encoding_closes(target,
                                                            encoding):
    """RFC 9112 6.1: the server may read such a request, but must close
    the connection after it; here it is refused, and nothing after it on
    the connection is read."""
    with _connect(target) as sock:
        sock.sendall(_chunked_head(target, 'Content-Length: 5',
                                   'Transfer-Encoding: ' + encoding) +
                     b'0\r\n\r\n' + SMUGGLED)
        _refused(_read_answers(sock), 400)


@pytest.mark.parametrize('fields', [
    ('Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'),
    ('Transfer-Encoding: chunked, chunked',),
    ('Transfer-Encoding: gzip', 'Transfer-Encoding: chunked'),
])
def test_a_transfer_encoding_given_twice_closes(target, fields):
    with _connect(target) as sock:
        sock.sendall(_chunked_head(target, *fields) + b'0\r\n\r\n' +
                     SMUGGLED)
        _refused(_read_answers(sock), 400, 501)


@pytest.mark.parametrize('encoding', ['xchunked', 'chunked, gzip',
                                      'identity'])
def test_an_unknown_transfer_encoding_closes(target, encoding):
    with _connect(target) as sock:
        sock.sendall(_chunked_head(target, 'Transfer-Encoding: ' + encoding)
                     + b'0\r\n\r\n' + SMUGGLED)
        _refused(_read_answers(sock), 400, 501)


def test_a_transfer_encoding_in_http_1_0_closes(target):
    with _connect(target) as sock:
        sock.sendall(_chunked_head(target, 'Transfer-Encoding: chunked',
                                   version='1.0') + b'0\r\n\r\n' + SMUGGLED)
        _refused(_read_answers(sock), 400)


@pytest.mark.parametrize('count, refused', [(95, False), (101, True),
                                            (300, True)])
def test_more_than_100_header_fields_are_refused(target, count, refused):
    """As gunicorn's limit (``--limit-request-fields``, 100): 431 from
    the built-in server, gunicorn's own status under gunicorn."""
    fields = ''.join('X-Field-%d: v\r\n' % i for i in range(count - 1))
    with _connect(target) as sock:
        sock.sendall(('GET / HTTP/1.1\r\nHost: x\r\n%sConnection: close'
                      '\r\n\r\n' % fields).encode())
        answers = _read_answers(sock)
    if not refused:
        assert [a[0] for a in answers] == [200], answers
        return
    statuses = (400, 431) if target.kind.startswith('api-gunicorn') \
        else (431,)
    _refused(answers, *statuses)
