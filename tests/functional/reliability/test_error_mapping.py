"""What the API answers for failures that come back over RPC: the
conductor's database away is 503 with a clear message; any other
remote error is a 500 that shows no traceback."""

import json

import oslo_messaging

from cyborg_lite.api import errors


def _fault(status, message):
    body = json.loads(errors.envelope(status, message))
    return json.loads(body['error_message'])


def test_database_unavailable_over_rpc_is_503():
    for exc_type in ('DBConnectionError', 'OperationalError'):
        exc = oslo_messaging.RemoteError(exc_type, 'connection refused',
                                         'Traceback (most recent call...')
        status, message = errors.status_and_message(exc)
        assert status == 503
        assert 'database is temporarily unavailable' in message
        assert 'Traceback' not in message
        assert _fault(status, message)['faultcode'] == 'Server'


def test_other_remote_errors_are_500():
    exc = oslo_messaging.RemoteError('KeyError', "'x'", 'Traceback ...')
    status, message = errors.status_and_message(exc)
    assert status == 500
    assert 'Traceback' not in message and "'x'" not in message


def test_broker_failures_are_503():
    for exc in (oslo_messaging.MessagingTimeout('t'),
                oslo_messaging.MessageDeliveryFailure('d')):
        status, message = errors.status_and_message(exc)
        assert status == 503
        assert 'temporarily unavailable' in message
