"""The API's Pecan application reads each handler's signature once and
answers as Pecan would: keys the handler does not take are dropped,
answers are rendered for the negotiated content type, and a handler's
own response object is the response."""

import json

import pecan
import webob

from cyborg_lite.api import pecan_app


class Root:

    @pecan.expose('json')
    def named(self, kept=None):
        return {'kept': kept}

    @pecan.expose('json')
    def anything(self, **kwargs):
        return kwargs

    @pecan.expose(content_type='text/plain')
    def text(self):
        return 'plain words'

    @pecan.expose()
    def own_response(self):
        return webob.Response(status=202, body=b'mine',
                              content_type='text/plain')

    @pecan.expose('json')
    def via_pecan_response(self):
        pecan.response.status = 204
        pecan.response.content_type = None
        return pecan.response


def _app():
    return pecan_app.make_app(Root(), force_canonical=False,
                              guess_content_type_from_ext=False)


def _get(app, path):
    return webob.Request.blank(path).get_response(app)


def test_keys_a_handler_does_not_take_are_dropped():
    app = _app()
    answer = _get(app, '/named?kept=1&dropped=2')
    assert answer.status_int == 200
    assert json.loads(answer.body) == {'kept': '1'}
    assert answer.content_type == 'application/json'


def test_a_handler_taking_any_keyword_gets_every_key():
    answer = _get(_app(), '/anything?a=1&b=2')
    assert json.loads(answer.body) == {'a': '1', 'b': '2'}


def test_text_and_response_objects_are_answered_as_pecan_does():
    app = _app()
    text = _get(app, '/text')
    assert (text.status_int, text.body, text.content_type) == (
        200, b'plain words', 'text/plain')
    own = _get(app, '/own_response')
    assert (own.status_int, own.body) == (202, b'mine')
    empty = _get(app, '/via_pecan_response')
    assert (empty.status_int, empty.body) == (204, b'')


def test_each_handler_signature_is_read_once(monkeypatch):
    reads = []
    getargspec = pecan_app.pecan_util.getargspec

    def counted(function):
        reads.append(getattr(function, '__name__', function))
        return getargspec(function)

    monkeypatch.setattr(pecan_app.pecan_util, 'getargspec', counted)
    app = _app()
    for _ in range(3):
        assert _get(app, '/named?kept=x').status_int == 200
        assert _get(app, '/anything?k=v').status_int == 200
    assert sorted(reads) == ['anything', 'named']


def test_pecan_itself_would_read_it_on_every_request(monkeypatch):
    # The positive control: the cost this application avoids is real.
    reads = []
    getargspec = pecan.core.getargspec

    def counted(function):
        reads.append(function.__name__)
        return getargspec(function)

    monkeypatch.setattr(pecan.core, 'getargspec', counted)
    app = pecan.make_app(Root(), force_canonical=False,
                         guess_content_type_from_ext=False)
    for _ in range(3):
        assert _get(app, '/named?kept=x').status_int == 200
    assert reads == ['named'] * 3
