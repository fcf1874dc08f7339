"""gunicorn's error page, as cyborg-lite's worker sends it: the status,
reason and message that gunicorn's ``Worker.handle_error`` chose, in the
API's JSON envelope, whatever the message holds."""

import json
import socket

import pytest
from gunicorn import util

from cyborg_lite.api import gunicorn_worker


def _answer(status, reason, message):
    """What the client reads when gunicorn writes its error page through
    the worker's socket wrapper."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        util.write_error(gunicorn_worker._ErrorAnswerSocket(ours), status,
                         reason, message)
        ours.shutdown(socket.SHUT_WR)
        data = b''
        while chunk := theirs.recv(65536):
            data += chunk
    head, _, body = data.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    headers = dict(line.split(': ', 1) for line in lines[1:])
    assert headers['Content-Type'] == 'application/json'
    assert int(headers['Content-Length']) == len(body)
    return lines[0], json.loads(json.loads(body)['error_message'])


@pytest.mark.parametrize('message', [
    "Invalid Request Line 'NOT A REQUEST'",
    'a <b>tag</b>, an & and "quotes" </body></html>',
    'two\nlines',
])
def test_message_status_and_reason_survive(message):
    status_line, fault = _answer(400, 'Bad Request', message)
    assert status_line == 'HTTP/1.1 400 Bad Request'
    assert fault == {'faultcode': 'Client', 'faultstring': message,
                     'debuginfo': None}


def test_server_error_without_message_names_its_reason():
    status_line, fault = _answer(500, 'Internal Server Error', '')
    assert status_line == 'HTTP/1.1 500 Internal Server Error'
    assert fault['faultcode'] == 'Server'
    assert fault['faultstring'] == 'Internal Server Error'
