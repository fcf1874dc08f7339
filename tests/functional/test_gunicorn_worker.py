"""cyborg-lite's gunicorn worker under a real gunicorn master, over real
sockets: a kept-alive connection is read by one thread, ``--threads``
bounds the requests run at once, idle connections close after
``--keep-alive``, and a stop answers the request in flight."""

import contextlib
import http.client
import os
import signal
import socket
import tempfile
import threading
import time
import urllib.parse

import psutil
import pytest

from cyborg_lite.api import gunicorn_worker
from tests.fixtures import processes
from tests.fixtures import raw_http

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


@contextlib.contextmanager
def gunicorn(*options):
    """A gunicorn master with one worker of ours serving the probe app;
    yields (host, port, the process)."""
    with tempfile.TemporaryDirectory() as tmp:
        group = processes.ProcessGroup(tmp)
        proc = group.start('gunicorn', processes.script('gunicorn') + [
            '--worker-class', gunicorn_worker.WORKER_CLASS, '--workers', '1',
            '--bind', '127.0.0.1:0', '--pythonpath', REPO,
            '--graceful-timeout', '10', '--no-control-socket', *options,
            'tests.fixtures.wsgi_probe:application'])
        try:
            url = proc.wait_for_line(r'Listening at: (http://\S+)').group(1)
            proc.wait_for_line(r'Booting worker')
            address = urllib.parse.urlsplit(url)
            yield address.hostname, address.port, proc
        finally:
            group.stop_all()
            assert not group.leftovers()


def _get(conn, path):
    conn.request('GET', path)
    resp = conn.getresponse()
    return resp.status, resp.read().decode(), resp


def test_kept_alive_connection_is_served_by_one_thread():
    with gunicorn('--threads', '4') as (host, port, _):
        conn = http.client.HTTPConnection(host, port, timeout=10)
        answers = [_get(conn, '/whoami') for _ in range(5)]
        assert {status for status, _, _ in answers} == {200}
        assert len({body for _, body, _ in answers}) == 1
        sock = conn.sock
        assert sock is not None
        _get(conn, '/whoami')
        assert conn.sock is sock, 'the connection was closed between requests'
        # A second connection is read by another thread.
        other = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(other, '/whoami')[1] != answers[0][1]


def test_body_the_app_left_unread_keeps_the_connection_usable():
    with gunicorn() as (host, port, _):
        conn = http.client.HTTPConnection(host, port, timeout=10)
        conn.request('POST', '/ignore', body=b'x' * 5000)
        resp = conn.getresponse()
        assert (resp.status, resp.read()) == (200, b'ignored')
        conn.request('POST', '/echo', body=b'hello')
        resp = conn.getresponse()
        assert (resp.status, resp.read()) == (200, b'hello')


def test_threads_bound_the_requests_run_at_once():
    with gunicorn('--threads', '2') as (host, port, _):
        answers = []

        def sleeper():
            conn = http.client.HTTPConnection(host, port, timeout=30)
            answers.append(_get(conn, '/sleep?s=0.3')[:2])

        threads = [threading.Thread(target=sleeper) for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert answers == [(200, 'slept')] * 5
        conn = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(conn, '/most')[1] == '2'


def test_idle_connection_closes_after_keep_alive():
    """A connection stays open between requests, and the worker closes
    it once it is idle (the socket timeout only guards against a
    hang)."""
    with gunicorn('--keep-alive', '1') as (host, port, _):
        conn = http.client.HTTPConnection(host, port, timeout=10)
        first = _get(conn, '/whoami')
        sock = conn.sock
        assert _get(conn, '/whoami')[:2] == first[:2]
        assert conn.sock is sock
        assert sock.recv(65536) == b''


def test_keep_alive_0_answers_one_request_per_connection():
    with gunicorn('--keep-alive', '0') as (host, port, _):
        conn = http.client.HTTPConnection(host, port, timeout=10)
        status, _, resp = _get(conn, '/whoami')
        assert status == 200
        assert resp.getheader('Connection') == 'close'


def _refused(host, port, raw):
    """The status and error envelope gunicorn answers to ``raw``."""
    sock = socket.create_connection((host, port), timeout=10)
    with sock:
        sock.sendall(raw)
        answer = b''
        while chunk := sock.recv(65536):
            answer += chunk
    resp = raw_http.parse(answer)
    return resp.status, resp.fault()


def test_requests_gunicorn_refuses_get_the_error_envelope():
    with gunicorn('--limit-request-field_size', '100') as (host, port, _):
        status, fault = _refused(host, port, b'NOT A REQUEST\r\n\r\n')
        assert status == 400
        assert fault['faultcode'] == 'Client'
        assert 'Invalid' in fault['faultstring']
        status, fault = _refused(
            host, port, b'GET / HTTP/1.1\r\nX-Big: ' + b'x' * 200 +
            b'\r\n\r\n')
        assert status in (400, 431)
        assert fault['faultcode'] == 'Client'


def test_silent_connection_does_not_hold_a_thread():
    """Connections that send nothing do not keep others from being
    served, even beyond --threads."""
    with gunicorn('--threads', '1') as (host, port, _):
        silent = [socket.create_connection((host, port), timeout=10)
                  for _ in range(3)]
        conn = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(conn, '/whoami')[0] == 200
        for sock in silent:
            sock.close()


def test_stop_answers_the_request_in_flight_and_closes():
    """SIGTERM: the request in flight is answered, then every
    connection closes and the worker exits."""
    with gunicorn('--threads', '2') as (host, port, proc):
        worker = psutil.Process(proc.pid).children()[0]
        idle = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(idle, '/whoami')[0] == 200
        answer = {}

        def slow():
            conn = answer['conn'] = http.client.HTTPConnection(
                host, port, timeout=30)
            answer['reply'] = _get(conn, '/sleep?s=1')

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.3)
        os.kill(worker.pid, signal.SIGTERM)
        t.join()
        status, body, _ = answer['reply']
        assert (status, body) == (200, 'slept')
        # Both connections are closed within the linger, and the worker
        # exits.
        assert idle.sock.recv(1) == b''
        assert answer['conn'].sock.recv(1) == b''
        worker.wait(timeout=10)
        assert not worker.is_running()


@pytest.mark.parametrize('threads', ['1', '3'])
def test_many_requests_over_few_connections(threads):
    with gunicorn('--threads', threads) as (host, port, _):
        failures, done = [], []

        def client():
            try:
                conn = http.client.HTTPConnection(host, port, timeout=30)
                answered = 0
                for _ in range(50):
                    status, body, _ = _get(conn, '/whoami')
                    if answered == 0:
                        first_socket = conn.sock
                    if status != 200 or not body:
                        failures.append((status, body))
                    # Kept alive: the 50 requests share one connection.
                    if conn.sock is not first_socket:
                        failures.append('a new connection')
                    answered += 1
                done.append(answered)
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(repr(exc))

        threads_ = [threading.Thread(target=client) for _ in range(4)]
        for t in threads_:
            t.start()
        for t in threads_:
            t.join()
        assert failures == []
        assert done == [50] * 4


def test_request_on_idle_connection_while_stopping_is_answered():
    """A request that arrives on a kept-alive connection just after
    SIGTERM is answered, with ``Connection: close``."""
    with gunicorn() as (host, port, proc):
        worker = psutil.Process(proc.pid).children()[0]
        conn = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(conn, '/whoami')[0] == 200
        os.kill(worker.pid, signal.SIGTERM)
        time.sleep(0.3)
        status, _, resp = _get(conn, '/whoami')
        assert status == 200
        assert resp.getheader('Connection') == 'close'


def test_worker_connections_bound_the_open_connections():
    """With --worker-connections 2, a third connection waits in the
    listen backlog until one of the two open ones closes."""
    with gunicorn('--worker-connections', '2', '--keep-alive', '30') as (
            host, port, _):
        first = http.client.HTTPConnection(host, port, timeout=10)
        second = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(first, '/whoami')[0] == 200
        assert _get(second, '/whoami')[0] == 200
        third = http.client.HTTPConnection(host, port, timeout=1.5)
        with pytest.raises(TimeoutError):
            _get(third, '/whoami')
        third.close()
        first.close()
        third = http.client.HTTPConnection(host, port, timeout=10)
        assert _get(third, '/whoami')[0] == 200
