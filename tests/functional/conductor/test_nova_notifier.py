"""The conductor's Nova notifier against a real HTTP endpoint on loopback."""

import http.server
import json
import threading

import pytest

from cyborg_lite import conf as cyborg_conf
from cyborg_lite.conductor import nova


class _Events(http.server.BaseHTTPRequestHandler):
    """Takes ``POST /os-server-external-events`` and answers 200."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length']))
        self.server.received.append(
            (self.path, self.headers.get('OpenStack-API-Version'),
             json.loads(body)))
        answer = b'{"events": []}'
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


@pytest.fixture
def nova_endpoint():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Events)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _bound_arq(number):
    return {'uuid': 'arq-%d' % number, 'instance_uuid': 'vm-%d' % number,
            'state': 'Bound'}


def test_events_reach_nova_and_the_record_of_them_stays_bounded(
        nova_endpoint):
    url = 'http://127.0.0.1:%d/v2.1' % nova_endpoint.server_address[1]
    conf = cyborg_conf.build_conf(
        overrides={('nova', 'endpoint_override'): url,
                   ('nova', 'auth_type'): 'none'})
    notifier = nova.NovaNotifier(conf)
    notifier.start()
    try:
        count = nova.SENT_KEPT + 20
        for number in range(count):
            notifier.notify([_bound_arq(number)])
        notifier.drain()
    finally:
        notifier.stop()

    assert len(nova_endpoint.received) == count
    path, version, body = nova_endpoint.received[-1]
    assert path == '/v2.1/os-server-external-events'
    assert version == 'compute 2.82'
    assert body == {'events': [{
        'name': 'accelerator-request-bound', 'server_uuid': 'vm-%d' % (
            count - 1), 'tag': 'arq-%d' % (count - 1),
        'status': 'completed'}]}
    # A long-running conductor keeps only the latest answers.
    assert len(notifier.sent) == nova.SENT_KEPT
    assert notifier.sent[-1] == (body['events'], 200)
