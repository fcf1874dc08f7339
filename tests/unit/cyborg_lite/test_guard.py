"""The request guard's decisions, on a small app behind it: which path
is which route, which query, media type and Accept it refuses, and what
it hands on."""

import json

import pytest
import webob
import webob.dec
import webtest

from cyborg_lite.api import errors
from cyborg_lite.api import guard


@webob.dec.wsgify
def _echo(req):
    """Answers what reached it: method, content type and body; like
    Pecan's REST controllers, it serves no HEAD."""
    if req.method == 'HEAD':
        return webob.Response(status=405)
    return webob.Response(json={
        'method': req.method,
        'content_type': req.environ.get('CONTENT_TYPE'),
        'body': req.body.decode()})


def _app():
    return webtest.TestApp(errors.ErrorEnvelopeMiddleware(
        guard.RequestGuard(_echo)))


def _fault(resp):
    return json.loads(resp.json['error_message'])['faultstring']


@pytest.mark.parametrize('path,methods', [
    ('', ('GET',)), ('/', ('GET',)), ('/v2', ('GET',)), ('/v2/', ('GET',)),
    ('/.json', ('GET',)), ('/v2.json', ('GET',)),
    ('/v2/device_profiles', ('GET', 'POST', 'DELETE')),
    ('/device_profiles/', ('GET', 'POST', 'DELETE')),
    ('/v2/device_profiles/x', ('GET', 'DELETE')),
    ('/v2/device_profiles/x/', ('GET', 'DELETE')),
    ('/v2/deployables/x/program', ('PATCH',)),
    ('/devices/x/enable', ('POST',)),
    ('/v2/device_profiles//', None), ('/v2/device_profiles//x', None),
    ('/v2/device_profiles/x//', None), ('/v2/deployables//program', None),
    ('//v2/devices', None), ('/v2/v2/devices', None), ('/v2x', None),
    ('/v2/devices/x/reset', None), ('/v2/devices/x/enable/y', None),
    ('/v2/accelerators', None), ('/v1', None)])
def test_route(path, methods):
    assert guard.route(path) == methods


@pytest.mark.parametrize('query', [
    '%ff', 'a=%c0%af', 'a=%ed%a0%80', 'x%80=1', 'a=%00', '%00=a',
    'a=b&c=%00', '_method=delete', 'a=1&%5Fmethod=put', '_method',
    'a=1;_method=x'])
def test_queries_refused(query):
    assert guard.query_error(query) is not None


@pytest.mark.parametrize('query', [
    'name=a,b', 'a=caf%C3%A9', 'a=%F0%9F%98%80', 'a=+b', 'method=x',
    'x_method=1', 'a=_method', 'filters.field=name&filters.value=x'])
def test_queries_passed(query):
    assert guard.query_error(query) is None


@pytest.mark.parametrize('content_type,refused', [
    ('application/json', False), ('Application/JSON', False),
    ('application/json; charset=utf-8', False),
    ('application/json;charset="UTF-8"', False),
    ('application/javascript', False), ('text/javascript', False),
    ('application/json; charset=utf-16', True),
    ('application/json; charset=latin-1', True), ('text/plain', True),
    ('multipart/form-data', True), ('application/x-www-form-urlencoded',
                                    True),
    ('application/json-patch+json', True), (';', True)])
def test_media_types(content_type, refused):
    assert (guard._media_type_error(content_type) is not None) == refused


def test_a_body_of_another_type_is_415_and_the_app_is_not_called():
    resp = _app().post('/v2/device_profiles', b'{}', status=415,
                       headers={'Content-Type': 'text/plain'})
    assert 'not text/plain' in _fault(resp)


def test_a_request_without_a_body_loses_its_type():
    resp = _app().post('/v2/device_profiles', b'',
                       headers={'Content-Type': 'multipart/form-data'})
    assert resp.json == {'method': 'POST', 'content_type': None,
                         'body': ''}


def test_untyped_and_json_bodies_reach_the_app():
    app = _app()
    resp = app.request('/v2/attributes', method='POST', body=b'{"a": 1}')
    assert resp.json == {'method': 'POST', 'content_type': None,
                         'body': '{"a": 1}'}
    resp = app.post('/v2/attributes', b'[]',
                    headers={'Content-Type': 'application/json'})
    assert resp.json['content_type'] == 'application/json'


def test_methods_not_served_are_405_with_allow():
    resp = _app().put('/v2/device_profiles', status=405)
    assert resp.headers['Allow'] == 'GET, POST, DELETE, HEAD'
    resp = _app().request('/v2/deployables/x/program', method='GET',
                          status=405)
    assert resp.headers['Allow'] == 'PATCH'


def test_head_runs_a_get_and_drops_the_body():
    resp = _app().head('/v2/devices/x', status=200)
    assert resp.body == b''
    get = _app().get('/v2/devices/x')
    assert resp.headers['Content-Length'] == str(len(get.body))


@pytest.mark.parametrize('accept,status', [
    ('text/html', 406), ('application/json;q=0', 406), ('image/*', 406),
    ('*/*', 200), ('', 200), ('application/*', 200),
    ('text/html, application/json;q=0.2', 200), ('a b c', 200)])
def test_accept(accept, status):
    _app().get('/v2/devices', headers={'Accept': accept}, status=status)


@pytest.mark.parametrize('path', ['/v2/devices/%ff', '/v2/devices/a%00b',
                                  '/v2/%ed%a0%80'])
def test_paths_not_utf8_or_with_nul_are_400(path):
    resp = _app().get(path, status=400)
    assert 'path' in _fault(resp)
