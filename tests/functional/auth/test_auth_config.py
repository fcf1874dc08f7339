"""Authentication that cannot work stops the API at start-up, with a
message that says what to set, instead of answering every request 500."""

from keystoneauth1 import loading
from keystonemiddleware import auth_token
import pytest
import webob

from cyborg_lite import conf as cl_conf
from cyborg_lite.api import app
from cyborg_lite.api import auth


def _conf(**authtoken):
    """The API's config in keystone mode with ``[keystone_authtoken]``
    set to ``authtoken`` (options that register only on use)."""
    conf = cl_conf.build_conf(overrides={('api', 'auth_strategy'): 'keystone'})
    conf.register_opts(auth_token.list_opts()[0][1],
                       group='keystone_authtoken')
    loading.register_auth_conf_options(conf, 'keystone_authtoken')
    conf.register_opts(loading.get_auth_plugin_conf_options('password'),
                       group='keystone_authtoken')
    for name, value in authtoken.items():
        conf.set_override(name, value, group='keystone_authtoken')
    return conf


def test_keystone_without_a_service_user_refuses_to_start():
    with pytest.raises(auth.AuthConfigError, match='auth_type'):
        app.setup_app(_conf(), conductor=object())


def test_keystone_with_an_incomplete_service_user_refuses_to_start():
    with pytest.raises(auth.AuthConfigError, match='auth_url'):
        app.setup_app(_conf(auth_type='password', username='cyborg'),
                      conductor=object())


def test_keystone_with_a_service_user_starts():
    conf = _conf(auth_type='password', auth_url='http://127.0.0.1:5/v3',
                 username='cyborg', password='x', project_name='service',
                 user_domain_name='Default', project_domain_name='Default')
    api = app.setup_app(conf, conductor=object())
    # auth_token guards it: no token, no answer but a 401 (without
    # asking Keystone, at a port nothing listens on); the discovery
    # document needs none.
    resp = webob.Request.blank('/v2/device_profiles').get_response(api)
    assert resp.status_int == 401, resp.text
    assert 'WWW-Authenticate' in resp.headers
    assert webob.Request.blank('/').get_response(api).status_int == 200
