"""Request bodies read in full, with a time limit, before the app runs.

placement-stub-api's server reads every body before the app sees it. A
server that hands the app the client's socket instead (gunicorn's sync
and gthread workers) leaves the reading to the app: a client that stalls
holds the worker for as long as it likes, and a body shorter than its
Content-Length, or a bad chunk, fails in the middle of the app (a 500).
``ReadBody`` reads the body first: each read waits
``READ_TIMEOUT`` seconds at most on the socket the server names
(``gunicorn.socket``), and a body that cannot be read is answered in
Placement's JSON: 408 when the client stalls, 400 when the body is cut
short or its chunks are malformed, 413 when it is larger than
``MAX_BODY_SIZE``.
"""

import io
import logging

import webob.exc

from placement_stub import errors

LOG = logging.getLogger(__name__)

READ_TIMEOUT = 5
MAX_BODY_SIZE = 1 << 20


class _Refused(Exception):
    def __init__(self, exc_class, detail):
        super().__init__(detail)
        self.exc_class = exc_class
        self.detail = detail


def _read(environ):
    """The whole request body, as bytes."""
    stream = environ['wsgi.input']
    length = environ.get('CONTENT_LENGTH')
    if length:
        # The server has checked that it is a number.
        expected = int(length)
        if expected > MAX_BODY_SIZE:
            raise _Refused(webob.exc.HTTPRequestEntityTooLarge,
                           'The request body is larger than %d bytes.'
                           % MAX_BODY_SIZE)
        data = stream.read(expected)
        if len(data) < expected:
            raise _Refused(webob.exc.HTTPBadRequest,
                           'The request body ended after %d of the %d '
                           'bytes its Content-Length announced.'
                           % (len(data), expected))
        return data
    if not environ.get('wsgi.input_terminated'):
        return b''  # no Content-Length, and no end to read up to
    data = stream.read(MAX_BODY_SIZE + 1)
    if len(data) > MAX_BODY_SIZE:
        raise _Refused(webob.exc.HTTPRequestEntityTooLarge,
                       'The request body is larger than %d bytes.'
                       % MAX_BODY_SIZE)
    return data


class ReadBody:
    """WSGI middleware: the app gets the body as an in-memory stream."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        sock = environ.get('gunicorn.socket')
        prior = sock.gettimeout() if sock is not None else None
        try:
            if sock is not None:
                sock.settimeout(READ_TIMEOUT)
            body = _read(environ)
        except _Refused as exc:
            return self._refuse(environ, start_response, exc.exc_class,
                                exc.detail)
        except TimeoutError:
            return self._refuse(
                environ, start_response, webob.exc.HTTPRequestTimeout,
                'The request body did not arrive within %d seconds.'
                % READ_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the server's framing
            # The server's reader refused the body (a bad chunk, a
            # connection that ended): the client's fault, not the app's.
            return self._refuse(environ, start_response,
                                webob.exc.HTTPBadRequest,
                                'The request body could not be read: %s'
                                % (str(exc) or type(exc).__name__))
        finally:
            if sock is not None:
                try:
                    sock.settimeout(prior)
                except OSError:
                    pass
        environ['wsgi.input'] = io.BytesIO(body)
        if body:
            environ['CONTENT_LENGTH'] = str(len(body))
        return self.app(environ, start_response)

    @staticmethod
    def _refuse(environ, start_response, exc_class, detail):
        LOG.info('Refused the body of %s %s: %s',
                 environ.get('REQUEST_METHOD'), environ.get('PATH_INFO'),
                 detail)
        environ['HTTP_ACCEPT'] = 'application/json'
        # The server closes the connection: its reader failed, or knows
        # there is more to read than the client sent.
        return errors.http(exc_class, detail)(environ, start_response)
