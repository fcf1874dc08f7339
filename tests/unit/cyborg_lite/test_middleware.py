"""The request id and body size limit middleware behave as
oslo.middleware's RequestId and RequestBodySizeLimiter."""

import json

import webob
import webob.dec
import webtest

from cyborg_lite import conf as cl_conf
from cyborg_lite.api import app as api_app
from cyborg_lite.api import errors
from cyborg_lite.api import middleware

GLOBAL_ID = 'req-12345678-1234-1234-1234-123456789abc'


@webob.dec.wsgify
def _echo(req):
    """Answers what the middleware left in the environ, and the body."""
    return webob.Response(json={
        'request_id': req.environ.get('openstack.request_id'),
        'global_request_id': req.environ.get('openstack.global_request_id'),
        'body': req.body.decode()})


def _app(max_size=64):
    return webtest.TestApp(errors.ErrorEnvelopeMiddleware(
        middleware.RequestId(middleware.BodySizeLimit(_echo, max_size))))


def test_every_request_gets_a_new_id_in_environ_and_header():
    app = _app()
    ids = set()
    for _ in range(3):
        resp = app.get('/')
        assert resp.json['request_id'].startswith('req-')
        assert resp.headers['x-openstack-request-id'] == \
            resp.json['request_id']
        ids.add(resp.json['request_id'])
    assert len(ids) == 3


def test_valid_inbound_id_becomes_the_global_one():
    app = _app()
    resp = app.get('/', headers={'X-OpenStack-Request-ID': GLOBAL_ID})
    assert resp.json['global_request_id'] == GLOBAL_ID
    assert resp.json['request_id'] != GLOBAL_ID
    for bogus in ('req-nope', GLOBAL_ID + 'x', 'x' + GLOBAL_ID):
        resp = app.get('/', headers={'X-OpenStack-Request-ID': bogus})
        assert resp.json['global_request_id'] is None


def test_an_app_own_request_id_header_is_kept():
    def app(environ, start_response):
        start_response('200 OK', [('X-OpenStack-Request-Id', 'mine')])
        return [b'']

    resp = webtest.TestApp(middleware.RequestId(app)).get('/')
    assert resp.headers.getall('x-openstack-request-id') == ['mine']


def test_body_up_to_the_limit_passes():
    resp = _app().post('/', 'x' * 64, content_type='text/plain')
    assert resp.json['body'] == 'x' * 64


def test_stated_length_over_the_limit_is_413_in_the_envelope():
    resp = _app().post('/', 'x' * 65, content_type='text/plain',
                       status=413)
    fault = json.loads(resp.json['error_message'])
    assert fault['faultcode'] == 'Client'
    assert '64 bytes' in fault['faultstring']
    assert resp.headers['x-openstack-request-id'].startswith('req-')


def test_body_of_no_stated_length_is_cut_at_the_limit():
    app = _app()
    for size, status in ((64, 200), (65, 413)):
        environ = {'REQUEST_METHOD': 'POST', 'CONTENT_TYPE': 'text/plain',
                   'wsgi.input_terminated': True}
        req = webtest.TestRequest.blank('/', environ)
        req.body_file = webob.request.io.BytesIO(b'y' * size)
        req.environ.pop('CONTENT_LENGTH', None)
        resp = app.do_request(req, status=status)
        assert resp.status_int == status


def test_the_api_answers_a_body_too_large_with_its_usual_headers():
    """The API's 413 (a body over [api] max_request_body_size, under a
    server that lets it through) has a request id and the version
    headers, like any answer; nothing reaches the conductor."""
    conf = cl_conf.build_conf(overrides={('api', 'auth_strategy'): 'noauth'})
    app = webtest.TestApp(api_app.setup_app(conf, conductor=object()))
    resp = app.post('/v2/device_profiles',
                    b' ' * (conf.api.max_request_body_size + 1),
                    headers={'Content-Type': 'application/json',
                             'OpenStack-API-Version': 'accelerator 2.2'},
                    status=413)
    assert 'error_message' in resp.json
    assert resp.headers['x-openstack-request-id'].startswith('req-')
    assert resp.headers['OpenStack-API-Version'] == 'accelerator 2.2'
