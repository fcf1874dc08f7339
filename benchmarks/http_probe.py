"""Bad HTTP framing against a server: what it answers, and how fast.

    python -m benchmarks.http_probe [--servers waitress,cheroot,granian]
                                    [--stalled 100] [--timeout 20]
    python -m benchmarks.http_probe --url http://127.0.0.1:6666 --target api

Each case sends raw bytes on a socket of its own and records the status
of the first answer, how many answers came back (a second one means a
request was read out of another's body), whether the server closed the
connection or reset it, whether a traceback showed, and the seconds
until the first answer or the close; a case that got nothing within
``--timeout`` seconds is a hang. ``verdict`` is ``ok`` when the outcome
is one a well-kept server gives (see ``CASES``). Two more cases hold
``--stalled`` connections stalled in the middle of a request head or
body while another client sends an ordinary request, which must be
answered.

Without ``--url`` the probe serves placement_stub's app (SQLite in a
temporary directory) with each server named in ``--servers`` (see
``benchmarks.http_servers``); with ``--url`` it probes a running
server: ``--target api`` the cyborg-lite API (noauth, as the all-in-one
runs it), ``--target placement`` placement_stub.
"""

import argparse
import http.client
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
import uuid

TARGETS = {
    'api': {
        'path': '/v2/device_profiles',
        'headers': {'X-Roles': 'admin', 'X-Project-Id': 'probe'},
        'body': lambda: json.dumps([{
            'name': 'probe-' + uuid.uuid4().hex,
            'groups': [{'resources:FPGA': '1'}]}]).encode(),
    },
    # tests/fixtures/wsgi_probe.py
    'echo': {
        'path': '/echo',
        'headers': {},
        'body': lambda: json.dumps({'probe': uuid.uuid4().hex}).encode(),
    },
    'placement': {
        'path': '/resource_providers',
        'headers': {'X-Roles': 'admin'},
        'body': lambda: json.dumps(
            {'name': 'probe-' + uuid.uuid4().hex}).encode(),
    },
}
SMUGGLED = b'GET /smuggled HTTP/1.1\r\nHost: probe\r\n\r\n'


def _head(method, path, headers, extra=()):
    lines = ['%s %s HTTP/1.1' % (method, path), 'Host: probe',
             'Content-Type: application/json']
    lines += ['%s: %s' % item for item in headers.items()]
    lines += list(extra)
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1')


def _chunked(body):
    return b'%x\r\n%s\r\n0\r\n\r\n' % (len(body), body)


class Answer:
    """What came back on one connection."""

    def __init__(self):
        self.data = b''
        self.responses = []  # (status, headers, body)
        self.closed = False
        self.reset = False
        self.seconds = None

    def parse(self, head_only=False):
        """Split ``data`` into complete responses; True if one more was
        found."""
        found = False
        while True:
            rest = self.data[self._offset():]
            end = rest.find(b'\r\n\r\n')
            if end < 0:
                return found
            lines = rest[:end].decode('latin-1').split('\r\n')
            try:
                status = int(lines[0].split()[1])
            except (IndexError, ValueError):
                status = None
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(':')
                headers[name.strip().lower()] = value.strip()
            body_start = end + 4
            if head_only and not self.responses or status in (
                    100, 204, 304) or status is None:
                length = 0
            elif 'content-length' in headers:
                length = int(headers['content-length'])
            elif headers.get('transfer-encoding', '').lower() == 'chunked':
                length = _chunked_length(rest[body_start:])
                if length is None:
                    return found
            elif self.closed:
                length = len(rest) - body_start
            else:
                return found
            if len(rest) < body_start + length:
                return found
            if status == 100:
                self._skip += body_start
                continue
            self.responses.append(
                (status, headers, rest[body_start:body_start + length]))
            self.first_at = self.first_at or time.monotonic()
            self._consumed += body_start + length
            found = True

    _skip = 0
    _consumed = 0
    first_at = None

    def _offset(self):
        return self._skip + self._consumed

    def summary(self):
        status = self.responses[0][0] if self.responses else None
        body = self.responses[0][2] if self.responses else self.data
        try:
            json.loads(body)
            is_json = True
        except ValueError:
            is_json = False
        return {'status': status, 'responses': len(self.responses),
                'closed': self.closed, 'reset': self.reset,
                'seconds': self.seconds, 'json': is_json and bool(body),
                'traceback': b'Traceback' in self.data,
                'body': body[:160].decode('latin-1')}


def _chunked_length(data):
    pos = 0
    while True:
        end = data.find(b'\r\n', pos)
        if end < 0:
            return None
        size = int(data[pos:end].split(b';')[0], 16)
        pos = end + 2 + size + 2
        if size == 0:
            return pos if len(data) >= pos else None


def _receive(sock, answer, deadline, head_only, linger, then):
    """Read into ``answer`` until the server closes, ``deadline``, or
    ``linger`` seconds after a complete answer; send ``then`` after the
    first answer."""
    while True:
        remaining = deadline - time.monotonic()
        if answer.responses:
            remaining = min(remaining, linger)
        if remaining <= 0:
            return
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return
        except OSError:
            answer.reset = True
            return
        if not chunk:
            answer.closed = True
            answer.parse(head_only)
            return
        answer.data += chunk
        if answer.parse(head_only) and then is not None:
            try:
                sock.sendall(then)
            except OSError:
                pass
            then = None


def exchange(address, payload, timeout, half_close=False, head_only=False,
             linger=1.0, then=None):
    """Send ``payload`` and read what comes back (see ``_receive``);
    ``seconds`` is the time until the first answer, or the close."""
    answer = Answer()
    started = time.monotonic()
    with socket.create_connection(address, timeout=timeout) as sock:
        try:
            sock.sendall(payload)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            answer.reset = True
        if not answer.reset:
            _receive(sock, answer, started + timeout, head_only, linger,
                     then)
    if answer.responses or answer.closed or answer.reset:
        answer.seconds = round(answer.first_at - started
                               if answer.first_at else
                               time.monotonic() - started, 2)
    return answer


def _expect(answer, statuses, closed_ok=False, responses=1):
    """``ok``, or what is wrong with ``answer``."""
    result = answer.summary()
    if result['traceback']:
        return 'a traceback in the answer'
    if result['status'] is None:
        if closed_ok and (answer.closed or answer.reset):
            return 'ok'
        return 'no answer'
    if result['status'] not in statuses:
        return 'status %s' % result['status']
    if result['responses'] > responses:
        return '%d answers: a second request was read' % result[
            'responses']
    return 'ok'


class Cases:
    """The framing cases against one server; each returns (answer,
    verdict)."""

    def __init__(self, address, target, timeout):
        self.address = address
        self.path = target['path']
        self.headers = target['headers']
        self.body = target['body']
        self.timeout = timeout

    def _post(self, extra, payload, **kwargs):
        return exchange(self.address, _head('POST', self.path, self.headers,
                                            extra) + payload,
                        self.timeout, **kwargs)

    def _raw(self, payload):
        return exchange(self.address, payload, self.timeout)

    def duplicate_length(self):
        data = self.body()
        answer = self._post(['Content-Length: %d' % len(data),
                             'Content-Length: %d' % (len(data) +
                                                     len(SMUGGLED))],
                            data + SMUGGLED)
        return answer, _expect(answer, {400})

    def head(self):
        # Any status will do (placement_stub allows no HEAD on
        # /resource_providers), if it comes with no body: the GET sent
        # after it on the same connection must get its own answer.
        answer = exchange(self.address,
                          _head('HEAD', self.path, self.headers),
                          self.timeout, head_only=True,
                          then=_head('GET', self.path, self.headers))
        verdict = _expect(answer, {200, 405}, responses=2)
        if verdict == 'ok' and (len(answer.responses) != 2 or
                                answer.responses[1][0] != 200):
            verdict = 'the GET after HEAD got %s' % (
                answer.responses[1][0] if len(answer.responses) == 2
                else 'no answer')
        return answer, verdict

    def short_body(self, half_close):
        data = self.body()
        answer = self._post(['Content-Length: %d' % (len(data) + 50)], data,
                            half_close=half_close)
        return answer, _expect(answer, {400, 408}, closed_ok=True)

    def length(self, value, statuses):
        answer = self._post(['Content-Length: %s' % value], self.body())
        return answer, _expect(answer, statuses)

    def chunked(self):
        answer = self._post(['Transfer-Encoding: chunked'],
                            _chunked(self.body()))
        return answer, _expect(answer, {200, 201, 409, 411})

    def bad_chunk(self):
        answer = self._post(['Transfer-Encoding: chunked'],
                            b'zz\r\n' + self.body() + b'\r\n0\r\n\r\n')
        return answer, _expect(answer, {400})

    def raw(self, payload, statuses):
        answer = self._raw(payload)
        return answer, _expect(answer, statuses)

    def stalled_head(self):
        answer = self._raw(b'POST %s HTTP/1.1\r\nHost: probe\r\n'
                           % self.path.encode())
        return answer, _expect(answer, {400, 408}, closed_ok=True)

    def all(self):
        """(name, case) of every case."""
        return [
            ('duplicate Content-Length', self.duplicate_length),
            ('HEAD, then GET on the connection', self.head),
            ('short body, client half-closes',
             lambda: self.short_body(True)),
            ('short body, client stalls', lambda: self.short_body(False)),
            ('Content-Length overflows',
             lambda: self.length('9' * 30, {400, 413})),
            ('Content-Length negative', lambda: self.length('-5', {400})),
            ('Content-Length not a number',
             lambda: self.length('abc', {400})),
            ('chunked body', self.chunked),
            ('invalid chunk size', self.bad_chunk),
            ('malformed request line',
             lambda: self.raw(b'GARBAGE\r\n\r\n', {400})),
            ('malformed header', lambda: self.raw(
                b'GET / HTTP/1.1\r\nHost: probe\r\nNo-Colon-Here\r\n\r\n',
                {400})),
            ('over-long request line', lambda: self.raw(
                b'GET /' + b'a' * 70000 + b' HTTP/1.1\r\nHost: probe\r\n\r\n',
                {400, 414, 431})),
            ('over-long header', lambda: self.raw(
                b'GET / HTTP/1.1\r\nHost: probe\r\nX-Long: ' +
                b'a' * 70000 + b'\r\n\r\n', {400, 431})),
            ('request head stalls', self.stalled_head),
        ]


def starvation(address, target, count, timeout, where):
    """Whether an ordinary GET is answered while ``count`` connections
    stall mid-head (``where='head'``) or mid-body."""
    stalled = []
    data = target['body']()
    if where == 'head':
        payload = b'POST %s HTTP/1.1\r\nHost: probe\r\n' % (
            target['path'].encode())
    else:
        payload = _head('POST', target['path'], target['headers'],
                        ['Content-Length: %d' % (len(data) + 50)]) + data
    try:
        for _ in range(count):
            sock = socket.create_connection(address, timeout=timeout)
            sock.sendall(payload)
            stalled.append(sock)
        # Let the server take up what the stalled clients sent.
        time.sleep(0.5)
        started = time.monotonic()
        conn = http.client.HTTPConnection(*address, timeout=timeout)
        try:
            conn.request('GET', target['path'], headers=target['headers'])
            status = conn.getresponse().status
        except OSError as exc:
            status = type(exc).__name__
        finally:
            conn.close()
        return {'stalled': count, 'status': status,
                'seconds': round(time.monotonic() - started, 2),
                'verdict': 'ok' if status == 200 else 'not answered'}
    finally:
        for sock in stalled:
            sock.close()


def probe(address, target, timeout, stalled):
    results = {}
    for name, case in Cases(address, target, timeout).all():
        try:
            answer, verdict = case()
            result = answer.summary()
        except OSError as exc:
            result, verdict = {'error': repr(exc)}, 'refused to connect'
        result['verdict'] = verdict
        results[name] = result
    for where in ('head', 'body'):
        results['%d connections stalled mid-%s' % (stalled, where)] = \
            starvation(address, target, stalled, timeout, where)
    return results


def placement_app():
    """placement_stub's app on SQLite in ``PROBE_STATE_DIR`` (granian
    calls this in its worker)."""
    from placement_stub import conf as conf_lib
    from placement_stub import deploy
    state = os.environ['PROBE_STATE_DIR']
    conf = conf_lib.build_conf(overrides={
        ('placement_database', 'connection'):
            'sqlite:///' + os.path.join(state, 'placement.sqlite'),
        ('placement_database', 'sqlite_synchronous'): False,
        ('api', 'auth_strategy'): 'noauth2'})
    return deploy.deploy(conf)


def _serve(name, state_dir):
    from benchmarks import http_servers
    if name == 'granian':
        return http_servers.GranianProcess(
            'benchmarks.http_probe:placement_app',
            env={'PROBE_STATE_DIR': state_dir}).start()
    os.environ['PROBE_STATE_DIR'] = state_dir
    return http_servers.IN_PROCESS[name](placement_app()).start()


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.http_probe')
    parser.add_argument('--servers', default='waitress,cheroot,granian',
                        type=lambda v: v.split(','))
    parser.add_argument('--url')
    parser.add_argument('--target', choices=sorted(TARGETS),
                        default='placement')
    parser.add_argument('--timeout', type=float, default=20.0)
    parser.add_argument('--stalled', type=int, default=100)
    args = parser.parse_args(argv)
    target = TARGETS[args.target]
    report = {}
    if args.url:
        url = urllib.parse.urlsplit(args.url)
        report[args.url] = probe((url.hostname, url.port), target,
                                 args.timeout, args.stalled)
    else:
        for name in args.servers:
            state_dir = tempfile.mkdtemp(prefix='http-probe-')
            server = _serve(name, state_dir)
            try:
                report[name] = probe((server.host, server.port), target,
                                     args.timeout, args.stalled)
            finally:
                server.stop()
                shutil.rmtree(state_dir, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == '__main__':
    threading.current_thread().name = 'probe'
    main()
