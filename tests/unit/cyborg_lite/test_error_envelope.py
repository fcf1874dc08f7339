"""ErrorEnvelopeMiddleware: successes pass as they are, every error
leaves in the envelope, whatever WSGI style the app inside uses."""

import json

import webtest

from cyborg_lite.api import errors


def _fault(resp):
    return json.loads(resp.json['error_message'])


def _app(status, body, content_type='text/plain', lazy=False,
         write=False, closed=None):
    def app(environ, start_response):
        headers = [('Content-Type', content_type), ('X-Kept', 'yes')]

        def chunks():
            if lazy:
                start_response(status, headers)
            yield body

        if not lazy:
            writer = start_response(status, headers)
            if write:
                writer(body)
                return []
        gen = chunks()
        if closed is None:
            return gen

        class Closing:
            def __iter__(self):
                return gen

            def close(self):
                closed.append(True)

        return Closing()

    return webtest.TestApp(errors.ErrorEnvelopeMiddleware(app))


def test_success_passes_unchanged():
    for style in ({}, {'lazy': True}, {'write': True}):
        resp = _app('201 Created', b'{"a": 1}', 'application/json',
                    **style).get('/')
        assert resp.status_int == 201
        assert resp.body == b'{"a": 1}'
        assert resp.headers['X-Kept'] == 'yes'


def test_plain_error_is_wrapped():
    for style in ({}, {'lazy': True}, {'write': True}):
        resp = _app('404 Not Found', b'<html>gone</html>', 'text/html',
                    **style).get('/', status=404)
        assert resp.content_type == 'application/json'
        assert _fault(resp) == {'faultcode': 'Client',
                                'faultstring': 'Not Found',
                                'debuginfo': None}


def test_envelope_is_kept():
    body = errors.envelope(409, 'taken')
    resp = _app('409 Conflict', body, 'application/json').get(
        '/', status=409)
    assert resp.body == body
    assert resp.headers['X-Kept'] == 'yes'


def test_app_iterable_is_closed():
    closed = []
    _app('200 OK', b'ok', closed=closed).get('/')
    _app('500 Internal Server Error', b'x', closed=closed).get(
        '/', status=500)
    assert closed == [True, True]


def test_app_that_raises_or_never_starts_gets_a_500_envelope():
    def boom(environ, start_response):
        raise RuntimeError('secret detail')

    def silent(environ, start_response):
        return [b'no status']

    for app in (boom, silent):
        resp = webtest.TestApp(errors.ErrorEnvelopeMiddleware(app)).get(
            '/', status=500)
        fault = _fault(resp)
        assert fault['faultcode'] == 'Server'
        assert 'secret' not in fault['faultstring']
