"""From exceptions to HTTP: one status table and Cyborg's error envelope.

Errors keep upstream's double-encoded envelope, which openstacksdk
parses::

    {"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"...\",
                        \"debuginfo\": null}"}

``ErrorEnvelopeMiddleware`` wraps any error that left the app in
another shape (Pecan's own 404 and 405, a 413) the same way, so a client
never sees HTML or a traceback.
"""

import json
import logging

import oslo_messaging
import webob
import webob.exc

from cyborg_lite import exception

LOG = logging.getLogger(__name__)

# Domain exception base class -> HTTP status. First match wins.
STATUS_BY_EXCEPTION = (
    (exception.Invalid, 400),
    (exception.Forbidden, 403),
    (exception.NotFound, 404),
    (exception.NotAcceptable, 406),
    (exception.Conflict, 409),
    (exception.Locked, 423),
    (exception.ServiceUnavailable, 503),
    (exception.AgentError, 502),
)

# Messaging failures mean the conductor or the broker is unreachable.
UNAVAILABLE = (oslo_messaging.MessagingTimeout,
               oslo_messaging.MessageDeliveryFailure,
               oslo_messaging.MessagingException)

# Conductor errors that mean its database is away for now (oslo.db's
# translations, SQLAlchemy's pool timeout), by the class name that
# RemoteError carries. Any other RemoteError is a bug: 500, not 503.
DB_UNAVAILABLE = ('DBConnectionError', 'DBDeadlock', 'OperationalError',
                  'DisconnectionError', 'TimeoutError')


def envelope(status: int, message: str) -> bytes:
    fault = {'faultcode': 'Client' if status < 500 else 'Server',
             'faultstring': message, 'debuginfo': None}
    return json.dumps({'error_message': json.dumps(fault)}).encode()


def error_response(status: int, message: str, headers=()) -> webob.Response:
    resp = webob.Response(status=status, body=envelope(status, message),
                          content_type='application/json', charset=None)
    for name, value in headers:
        resp.headers[name] = value
    return resp


def status_and_message(exc: Exception) -> tuple[int, str]:
    """The HTTP status and client-safe message for any exception."""
    if isinstance(exc, exception.CyborgLiteException):
        for cls, status in STATUS_BY_EXCEPTION:
            if isinstance(exc, cls):
                return status, exc.message
        return 500, exc.message
    if isinstance(exc, webob.exc.HTTPException):
        return exc.code, exc.explanation or exc.title
    if isinstance(exc, UnicodeDecodeError):
        # WebOb decoding a query string, path or form that is not UTF-8.
        return 400, 'The request is not valid UTF-8.'
    if isinstance(exc, oslo_messaging.RemoteError):
        return _remote_status(exc)
    if isinstance(exc, UNAVAILABLE):
        return 503, ('The accelerator service is temporarily unavailable '
                     '(%s). Try again later.' % type(exc).__name__)
    LOG.exception('Unexpected error')
    return 500, 'An unexpected error occurred; see the service log.'


def _remote_status(exc: oslo_messaging.RemoteError) -> tuple[int, str]:
    if exc.exc_type == 'UnsupportedVersion':
        # A conductor of an older release, during an upgrade done in the
        # wrong order: it will serve the call once it is upgraded.
        LOG.warning('A conductor does not serve this call: %s', exc.value)
        return 503, ('A conductor does not serve this API server\'s RPC '
                     'version yet: upgrade the conductors before the API '
                     'servers. Try again later.')
    if exc.exc_type in DB_UNAVAILABLE:
        LOG.warning('Conductor database unavailable: %s', exc.exc_type)
        return 503, ('The accelerator database is temporarily unavailable '
                     '(%s). Try again later.' % exc.exc_type)
    LOG.error('Unexpected error in the conductor: %s: %s', exc.exc_type,
              exc.value)
    return 500, 'An unexpected error occurred; see the service log.'


class ErrorEnvelopeMiddleware:
    """Wraps every non-JSON error response in the error envelope.

    The app's response is collected as plain WSGI: a success goes out as
    it came, and only an error is looked at through WebOb.
    """

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        started = []        # [status, headers], as the app last gave them
        written = []        # what the app wrote through write()

        def collect(status, headers, exc_info=None):
            started[:] = [status, headers]
            return written.append

        try:
            chunks = self.app(environ, collect)
            try:
                body = written + list(chunks)
            finally:
                if hasattr(chunks, 'close'):
                    chunks.close()
            status, headers = started
        except Exception as exc:
            status, message = status_and_message(exc)
            return error_response(status, message)(environ, start_response)
        if int(status[:3]) < 400:
            start_response(status, headers)
            return body
        resp = webob.Response(status=status, headerlist=list(headers),
                              app_iter=body)
        if not _is_envelope(resp):
            wrapped = error_response(resp.status_int, _plain_message(resp))
            # The error's own headers (WWW-Authenticate, Allow, the
            # version headers) stay; those of the body it replaces go.
            kept = [(name, value) for name, value in resp.headerlist
                    if name.lower() not in _BODY_HEADERS]
            names = {name.lower() for name, _ in kept}
            wrapped.headerlist[:] = [
                (name, value) for name, value in wrapped.headerlist
                if name.lower() not in names] + kept
            resp = wrapped
        return resp(environ, start_response)


# Headers that describe a response's body, which the envelope replaces.
_BODY_HEADERS = frozenset({'content-type', 'content-length',
                           'content-encoding', 'content-md5',
                           'transfer-encoding'})


def _is_envelope(resp) -> bool:
    if resp.content_type != 'application/json':
        return False
    try:
        return 'error_message' in json.loads(resp.body)
    except (ValueError, TypeError):
        return False


def _plain_message(resp) -> str:
    if resp.content_type == 'application/json':
        try:
            body = json.loads(resp.body)
            if isinstance(body, dict) and body.get('error'):
                return str(body['error'].get('message', body['error']))
        except ValueError:
            pass
    return resp.status.split(' ', 1)[-1]
