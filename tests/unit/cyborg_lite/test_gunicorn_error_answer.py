"""gunicorn's error page, as cyborg-lite's worker sends it: the status,
reason and message that gunicorn's ``Worker.handle_error`` chose, in the
API's JSON envelope, whatever the message holds."""

import socket

import pytest
from gunicorn import util

from cyborg_lite.api import gunicorn_worker
from tests.fixtures import raw_http


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
    return raw_http.parse(data)


@pytest.mark.parametrize('message', [
    "Invalid Request Line 'NOT A REQUEST'",
    'a <b>tag</b>, an & and "quotes" </body></html>',
    'two\nlines',
])
def test_message_status_and_reason_survive(message):
    resp = _answer(400, 'Bad Request', message)
    assert (resp.status, resp.reason) == (400, 'Bad Request')
    assert resp.fault() == {'faultcode': 'Client', 'faultstring': message,
                            'debuginfo': None}


def test_server_error_without_message_names_its_reason():
    resp = _answer(500, 'Internal Server Error', '')
    assert (resp.status, resp.reason) == (500, 'Internal Server Error')
    assert resp.fault()['faultcode'] == 'Server'
    assert resp.fault()['faultstring'] == 'Internal Server Error'
