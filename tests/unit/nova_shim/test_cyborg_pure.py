"""Cyborg client logic that needs no server: groups, errors, auth."""

import json

from keystoneauth1 import http_basic
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import service_token
import pytest
import requests

from nova_shim.accelerator import cyborg
from nova_shim import auth
from nova_shim import conf as shim_conf
from nova_shim.context import RequestContext
from nova_shim import exception

CTX = RequestContext(user_id='u1', project_id='p1', roles=['member'],
                     auth_token='user-token')


def response(status, body):
    resp = requests.Response()
    resp.status_code = status
    resp._content = body if isinstance(body, bytes) else json.dumps(
        body).encode()
    resp.headers['Content-Type'] = 'application/json'
    return resp


def cyborg_error(status, faultstring):
    fault = {'faultcode': 'Client' if status < 500 else 'Server',
             'faultstring': faultstring, 'debuginfo': None}
    return response(status, {'error_message': json.dumps(fault)})


def test_requester_id():
    assert cyborg.get_device_profile_group_requester_id(0) == \
        'device_profile_0'
    assert cyborg.get_device_profile_group_requester_id(1, 'port') == \
        'device_profile_1port'


def test_request_groups_skip_accel_and_unknown_keys():
    groups = cyborg._CyborgClient.get_device_request_groups(
        [{'resources:FPGA': '2', 'trait:CUSTOM_A': 'required',
          'accel:function_id': 'f1', 'other': 'x'},
         {'resources:CUSTOM_QAT': '1', 'trait:CUSTOM_B': 'forbidden'}],
        owner=None)
    assert [g.requester_id for g in groups] == ['device_profile_0',
                                                'device_profile_1']
    assert groups[0].resources == {'FPGA': 2}
    assert groups[0].required_traits == {'CUSTOM_A'}
    assert groups[1].forbidden_traits == {'CUSTOM_B'}


def test_decode_double_encoded_fault():
    assert cyborg.decode_error(cyborg_error(404, 'ExtArq not found')) == \
        'ExtArq not found'


def test_decode_keystonemiddleware_401():
    body = {'error': {'code': 401, 'title': 'Unauthorized',
                      'message': 'The request you have made requires '
                                 'authentication.'}}
    assert cyborg.decode_error(response(401, body)).startswith(
        'The request you have made')


def test_decode_plain_string_envelope_and_text():
    assert cyborg.decode_error(response(423, {'error_message': ''})) == ''
    assert cyborg.decode_error(response(502, b'<html>bad gateway')) == \
        '<html>bad gateway'
    assert cyborg.decode_error(response(500, {'error_message': 'boom'})) == \
        'boom'


def test_exceptions_carry_status_and_message():
    exc = exception.AcceleratorRequestBindingFailed(
        arqs=['a', 'b'], msg='Cyborg returned 403: denied', status_code=403)
    assert exc.arqs == ['a', 'b']
    assert exc.status_code == 403
    assert str(exc) == ('Failed to bind accelerator requests: '
                        'Cyborg returned 403: denied')
    assert str(exception.ForbiddenWithAccelerators()) == (
        'Feature not supported with instances that have accelerators.')


def test_noauth_headers():
    plugin = auth.NoAuthHeaders('p1', 'u1', ['member', 'reader'],
                                ['service'], 'http://x/v2')
    assert plugin.get_headers(None) == {
        'X-Project-Id': 'p1', 'X-User-Id': 'u1', 'X-Roles': 'member,reader',
        'X-Service-Roles': 'service'}
    assert plugin.get_endpoint(None) == 'http://x/v2'


def conf_with(**overrides):
    return shim_conf.build_conf(overrides={
        tuple(key.split('__')): value for key, value in overrides.items()})


def test_auth_unset_uses_the_users_token():
    plugin = auth.get_auth_plugin(conf_with(), 'cyborg', CTX)
    assert isinstance(plugin, auth.ContextTokenAuth)
    assert plugin.get_headers(None) == {'X-Auth-Token': 'user-token'}


def test_auth_token_endpoint_from_catalog():
    catalog = [{'type': 'accelerator', 'name': 'cyborg', 'endpoints': [
        {'interface': 'internal', 'region_id': 'R1',
         'url': 'http://cyborg.internal/v2'}]}]
    plugin = auth.ContextTokenAuth('t', catalog)
    assert plugin.get_endpoint(None, service_type='accelerator',
                               interface=['internal', 'public']) == \
        'http://cyborg.internal/v2'
    assert plugin.get_endpoint(None, service_type='placement') is None


def test_auth_none_sends_identity_and_service_roles():
    conf = conf_with(cyborg__auth_type='none',
                     service_user__send_service_user_token=True)
    plugin = auth.get_auth_plugin(conf, 'cyborg', CTX)
    assert plugin.get_headers(None)['X-Service-Roles'] == 'service'
    ctx = RequestContext('u1', 'p1', ['member'], service_token='svc')
    wrapped = auth.get_auth_plugin(conf, 'cyborg', ctx)
    assert isinstance(wrapped, service_token.ServiceTokenAuthWrapper)
    assert wrapped.get_headers(None)['X-Service-Token'] == 'svc'


def test_auth_http_basic_from_config():
    conf = conf_with(cyborg__auth_type='http_basic')
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('http_basic'),
                       group='cyborg')
    conf.set_override('username', 'nova', group='cyborg')
    conf.set_override('password', 'secret', group='cyborg')
    plugin = auth.get_auth_plugin(conf, 'cyborg', CTX)
    assert isinstance(plugin, http_basic.HTTPBasicAuth)
    assert plugin.get_headers(None) == {
        'Authorization': 'Basic bm92YTpzZWNyZXQ='}


@pytest.mark.parametrize('send', [False, True])
def test_no_service_token_without_one(send):
    conf = conf_with(service_user__send_service_user_token=send)
    plugin = auth.get_auth_plugin(conf, 'cyborg', CTX)
    assert 'X-Service-Token' not in plugin.get_headers(None)


def test_service_user_credentials_wrap_the_user_auth():
    conf = conf_with(service_user__send_service_user_token=True,
                     service_user__auth_type='password')
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('password'),
                       group='service_user')
    conf.set_override('auth_url', 'http://keystone/v3', group='service_user')
    plugin = auth.get_auth_plugin(conf, 'cyborg', CTX)
    assert isinstance(plugin, service_token.ServiceTokenAuthWrapper)
    assert isinstance(plugin.user_auth, auth.ContextTokenAuth)
