"""A scripted HTTP peer answering with Cyborg's response shapes.

SCRIPTED PEER: the code under test is nova_shim's Cyborg *client*, so a
peer that returns the contract's response shapes (status codes,
``{"arqs": [...]}``, the double-encoded error envelope) checks request
building and error decoding, including answers the real API does not
give on demand (a 500, exact headers). The same client runs against the
real cyborg-lite stack in ``test_cyborg_live.py``; move a case there
whenever the real API can produce it.
"""

import dataclasses
import http.server
import json
from urllib import parse

from tests.fixtures import loopback_http


@dataclasses.dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: object


def error_body(status: int, faultstring: str) -> dict:
    """Cyborg's error envelope: a JSON fault document inside a string."""
    fault = {'faultcode': 'Client' if status < 500 else 'Server',
             'faultstring': faultstring, 'debuginfo': None}
    return {'error_message': json.dumps(fault)}


class _Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        url = parse.urlsplit(self.path)
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length) if length else b''
        self.server.peer.requests.append(Recorded(
            self.command, url.path, parse.parse_qs(url.query),
            dict(self.headers), json.loads(raw) if raw else None))
        status, body = self.server.peer.routes.get(
            (self.command, url.path),
            (404, error_body(404, 'The resource could not be found.')))
        payload = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        if payload:
            self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_DELETE = _answer

    def log_message(self, *args) -> None:
        pass


class ScriptedCyborg(loopback_http.LoopbackHTTPServer):
    """Serve ``routes[(method, path)] = (status, body)`` on a free port."""

    handler = _Handler
    poll_interval = 0.02

    def __init__(self) -> None:
        super().__init__()
        self.routes: dict = {}
        self.requests: list[Recorded] = []

    @property
    def endpoint(self) -> str:
        return 'http://127.0.0.1:%d/v2' % self.port
