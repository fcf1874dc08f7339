"""http_basic: the identity file is read as written, and a password
bcrypt cannot take is a 401, not an error (cyborg-lite and the placement
stub alike)."""

import base64

import bcrypt
import pytest
import webob
import webob.dec
import webtest

from lite_common import auth
from lite_common import identity_file
from placement_stub import auth as placement_auth
from placement_stub import conf as placement_conf


@webob.dec.wsgify
def _who(req):
    return webob.Response(json={
        'project': req.environ.get('HTTP_X_PROJECT_ID'),
        'roles': req.environ.get('HTTP_X_ROLES')})


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / 'htpasswd'
    path.write_text('alice:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(4)).decode())
    return str(path)


def _basic(user, password):
    return {'Authorization': 'Basic ' + base64.b64encode(
        ('%s:%s' % (user, password)).encode()).decode()}


@pytest.mark.parametrize('text,fragment', [
    ('no:\n  project_id: p\n', 'user name False is not a string'),
    ('123:\n  project_id: p\n', 'user name 123 is not a string'),
    ('alice:\n  roles: admin\n', 'roles of user alice is not a list'),
    ('alice:\n  project_id: null\n', 'project_id of user alice is not a'),
    ('alice:\n  service_roles: [1]\n', 'service_roles of user alice'),
    ('alice: [admin]\n', 'entry of user alice is not a mapping'),
    ('- alice\n', 'not a mapping of user names'),
    ('alice:\n  role: [admin]\n', r"unknown keys \['role'\]"),
])
def test_an_identity_file_that_would_mean_something_else_is_refused(
        tmp_path, text, fragment):
    path = tmp_path / 'identities.yaml'
    path.write_text(text)
    with pytest.raises(ValueError, match=fragment):
        identity_file.read(str(path))


def test_quoted_names_and_lists_are_read(tmp_path):
    path = tmp_path / 'identities.yaml'
    path.write_text("'no':\n  project_id: p-no\n  roles: [reader]\n")
    assert identity_file.read(str(path)) == {
        'no': {'project_id': 'p-no', 'roles': ['reader']}}


def test_a_password_bcrypt_cannot_take_is_401(user_file):
    app = webtest.TestApp(auth.BasicAuth(
        _who, user_file, auth.IdentityMap({}, ['member']),
        realm='cyborg-lite'))
    assert app.get('/', headers=_basic('alice', 'secret')).json == {
        'project': 'alice', 'roles': 'member'}
    for password in ('x' * 73, 'y' * 1000):
        resp = app.get('/', headers=_basic('alice', password), status=401)
        assert 'WWW-Authenticate' in resp.headers


def test_the_placement_stub_answers_the_same_401(user_file):
    conf = placement_conf.build_conf(overrides={
        ('api', 'auth_strategy'): 'http_basic',
        ('api', 'http_basic_auth_user_file'): user_file})
    app = webtest.TestApp(placement_auth.wrap(_who, conf))
    assert app.get('/x', headers=_basic('alice', 'secret')).status_int == 200
    app.get('/x', headers=_basic('alice', 'z' * 100), status=401)


def _cpu_of_401(app, user, password):
    import time
    start = time.process_time()
    app.get('/x', headers=_basic(user, password), status=401)
    return time.process_time() - start


@pytest.mark.parametrize('service', ['cyborg-lite', 'placement-stub'])
def test_an_unknown_user_costs_what_a_wrong_password_costs(tmp_path,
                                                           service):
    # The time of a 401 must not tell which user names exist: an unknown
    # user gets the bcrypt comparison a wrong password gets. CPU time of
    # the two, compared with each other (cost 10: about 50 ms each).
    path = tmp_path / 'htpasswd'
    path.write_text('alice:%s\n' % bcrypt.hashpw(
        b'secret', bcrypt.gensalt(10)).decode())
    if service == 'cyborg-lite':
        app = webtest.TestApp(auth.BasicAuth(
            _who, str(path), auth.IdentityMap({}, ['member']),
            realm='cyborg-lite'))
    else:
        conf = placement_conf.build_conf(overrides={
            ('api', 'auth_strategy'): 'http_basic',
            ('api', 'http_basic_auth_user_file'): str(path)})
        app = webtest.TestApp(placement_auth.wrap(_who, conf))
    wrong_password = min(_cpu_of_401(app, 'alice', 'guess')
                         for _ in range(3))
    unknown_user = min(_cpu_of_401(app, 'mallory', 'guess')
                       for _ in range(3))
    assert unknown_user > wrong_password / 2
    # Over bcrypt's 72 bytes: a 401 for both, without a comparison.
    app.get('/x', headers=_basic('mallory', 'z' * 100), status=401)
