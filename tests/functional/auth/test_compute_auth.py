"""nova_shim's compute API authenticates and authorizes as Nova does,
with real Keystone tokens.

The compute service runs with ``[api] auth_strategy = keystone``
(keystonemiddleware against the Keystone of these tests) and Nova's
default policy. Each persona of ``.conftest`` calls each route: a
member, reader and manager of ``proj-a`` (which owns the server), a
member of ``proj-b``, an admin, a user with only the ``service`` role,
Nova's service user (admin and service), and tokens scoped to the
system or to a domain. Every call also sends the identity headers a
forger would (``X-Roles: admin``, ``X-Service-Roles: service``), which
must change nothing.
"""

import time
import uuid

import pytest
import requests

from nova_shim.api.handlers import server_actions
from nova_shim.service import ComputeService
from nova_shim import conf as shim_conf
from placement_stub.fixture import PlacementFixture
from tests.functional.auth import conftest

FLAVOR = {'vcpus': 1, 'ram': 64, 'disk': 1, 'extra_specs': {}}
# A version that takes the 2.53 service update and 2.82's events.
VERSION = {'OpenStack-API-Version': 'compute 2.82'}


@pytest.fixture(scope='module')
def compute(keystone, tmp_path_factory):
    mode = conftest.keystone_identities(keystone)
    with PlacementFixture() as placement:
        conf = shim_conf.build_conf(overrides={
            (None, 'state_path'): str(tmp_path_factory.mktemp('shim')),
            (None, 'host'): 'auth-compute',
            ('compute', 'hypervisor_hostnames'): ['auth-node'],
            ('compute', 'api_port'): 0,
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): placement.endpoint,
            ('cyborg', 'auth_type'): 'none',
            ('database', 'sync_on_startup'): True})
        assert conf.api.auth_strategy == 'keystone'  # the default
        mode.configure_api(conf)
        with ComputeService(conf) as service:
            service.mode = mode
            service.call = lambda *a, **kw: _call(service, *a, **kw)
            service.servers = {
                'alice': _boot(service, 'alice'),
                'bob': _boot(service, 'bob')}
            yield service


def _call(service, user, method, path, body=None, service_token=False,
          headers=None):
    sent = dict(VERSION)
    if user is not None:
        sent.update(service.mode.headers(user, service_token))
    sent.update(headers or {})
    return requests.request(method, service.url + '/v2.1' + path, json=body,
                            headers=sent, timeout=60)


def _boot(service, user):
    """A server of ``user``'s project, once ACTIVE."""
    resp = service.call(user, 'POST', '/servers', {'server': {
        'name': 'auth-%s' % user, 'flavor': FLAVOR}})
    assert resp.status_code == 202, resp.text
    server = resp.json()['server']['id']
    deadline = time.monotonic() + 30
    while True:
        shown = service.call(user, 'GET', '/servers/' + server).json()
        if shown['server']['status'] == 'ACTIVE':
            return server
        assert time.monotonic() < deadline, shown
        time.sleep(0.05)


def _listed(resp):
    assert resp.status_code == 200, resp.text
    return {s['id'] for s in resp.json()['servers']}


# -- authentication ------------------------------------------------------


def test_no_token_or_a_bad_one_is_401(compute):
    for headers in ({}, {'X-Auth-Token': 'not-a-token'},
                    # What noauth2 would take: ignored here.
                    {'X-Project-Id': 'proj-a', 'X-Roles': 'admin'},
                    {'X-Auth-Token': 'admin:admin'}):
        for method, path in (('GET', '/servers'), ('GET', '/os-services'),
                             ('POST', '/os-server-external-events')):
            resp = compute.call(None, method, path, {'events': []},
                                headers=headers)
            assert resp.status_code == 401, (headers, path, resp.text)
            assert 'unauthorized' in resp.json() or 'error' in resp.json()


def test_discovery_and_health_need_no_token(compute):
    for path in ('/', '/v2.1', '/v2.1/', '/healthcheck'):
        resp = requests.get(compute.url + path, timeout=30)
        assert resp.status_code == 200, (path, resp.text)


# -- servers -------------------------------------------------------------


LIST_STATUS = {'alice': 200, 'dave': 200, 'bob': 200, 'admin': 200,
               'svc': 403, 'sysadmin': 403, 'domadmin': 403}


@pytest.mark.parametrize('path', ['/servers', '/servers/detail'])
@pytest.mark.parametrize('user', sorted(LIST_STATUS))
def test_lists_show_the_callers_project_only(compute, path, user):
    resp = compute.call(user, 'GET', path)
    assert resp.status_code == LIST_STATUS[user], resp.text
    if resp.status_code != 200:
        return
    listed = _listed(resp)
    if user in ('alice', 'dave'):
        assert compute.servers['alice'] in listed
        assert compute.servers['bob'] not in listed
    else:
        # bob's own; the admin's project has none, and Nova lists every
        # project's only with all_tenants.
        assert compute.servers['alice'] not in listed


@pytest.mark.parametrize('user, status', [('alice', 403), ('dave', 403),
                                          ('bob', 403), ('svc', 403),
                                          ('sysadmin', 403), ('admin', 200)])
def test_all_tenants_is_the_admins(compute, user, status):
    for path in ('/servers?all_tenants=1', '/servers/detail?all_tenants'):
        resp = compute.call(user, 'GET', path)
        assert resp.status_code == status, (path, resp.text)
    if status == 200:
        assert set(compute.servers.values()) <= _listed(resp)
        only_b = compute.call(user, 'GET', '/servers?all_tenants=1&'
                              'project_id=' + compute.mode.project('bob'))
        assert _listed(only_b) == {compute.servers['bob']}


SHOW_STATUS = {'alice': 200, 'dave': 200, 'admin': 200, 'bob': 404,
               'svc': 403, 'sysadmin': 403, 'domadmin': 403}


@pytest.mark.parametrize('user', sorted(SHOW_STATUS))
def test_show_is_the_projects_readers_and_the_admins(compute, user):
    resp = compute.call(user, 'GET', '/servers/' + compute.servers['alice'])
    assert resp.status_code == SHOW_STATUS[user], resp.text


@pytest.mark.parametrize('user', ['dave', 'svc', 'sysadmin', 'domadmin'])
def test_create_is_a_members(compute, user):
    resp = compute.call(user, 'POST', '/servers', {'server': {
        'name': 'refused', 'flavor': FLAVOR}})
    assert resp.status_code == 403, resp.text
    assert 'os_compute_api:servers:create' in resp.text


# action -> {user: status}; 400 for an action the policy let through
# that the server's state or the host refuse.
ACTION_STATUS = {
    'os-stop': {'dave': 403, 'bob': 404, 'svc': 403, 'sysadmin': 403},
    'reboot': {'dave': 403, 'bob': 404, 'svc': 403},
    'pause': {'dave': 403, 'bob': 404, 'domadmin': 403},
    'shelveOffload': {'alice': 403, 'dave': 403, 'carol': 403},
    'evacuate': {'alice': 403, 'carol': 403, 'admin': 400},
    # Accepted, and on this one-node service no other host fits: the
    # server stays where it was.
    'migrate': {'alice': 403, 'dave': 403, 'carol': 202, 'admin': 202},
    'os-migrateLive': {'alice': 403, 'carol': 400},
    'suspend': {'dave': 403, 'alice': 400},
    'createImage': {'dave': 403, 'bob': 404},
    'createBackup': {'dave': 403, 'bob': 404},
    'rescue': {'dave': 403, 'bob': 404},
}
ACTION_BODIES = {'reboot': {'type': 'SOFT'},
                 'os-migrateLive': {'host': None, 'block_migration': 'auto'},
                 'createImage': {'name': 'refused'},
                 'createBackup': {'name': 'refused', 'backup_type': 'daily',
                                  'rotation': 1}}


@pytest.mark.parametrize('action, user, status', [
    (action, user, status) for action, users in sorted(ACTION_STATUS.items())
    for user, status in sorted(users.items())])
def test_server_actions_follow_novas_policy(compute, action, user, status):
    server = compute.servers['alice']
    resp = compute.call(user, 'POST', '/servers/%s/action' % server,
                        {action: ACTION_BODIES.get(action)})
    assert resp.status_code == status, resp.text
    if status == 403:
        assert "Policy doesn't allow" in resp.json()['forbidden']['message']
    deadline = time.monotonic() + 30
    while True:
        show = compute.call('alice', 'GET', '/servers/' + server).json()
        if not show['server']['OS-EXT-STS:task_state'] or \
                time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert show['server']['status'] == 'ACTIVE'


@pytest.mark.parametrize('user, status', [('dave', 403), ('bob', 404),
                                          ('svc', 403), ('sysadmin', 403)])
def test_delete_is_the_projects_members(compute, user, status):
    resp = compute.call(user, 'DELETE',
                        '/servers/' + compute.servers['alice'])
    assert resp.status_code == status, resp.text


def test_a_member_acts_on_its_own_server(compute):
    server = _boot(compute, 'alice')
    for action in ('os-stop', 'os-start'):
        resp = compute.call('alice', 'POST', '/servers/%s/action' % server,
                            {action: None})
        assert resp.status_code == 202, resp.text
    resp = compute.call('alice', 'DELETE', '/servers/' + server)
    assert resp.status_code == 204, resp.text


def test_forged_identity_headers_change_nothing(compute):
    """alice's token with another project's id and the admin role in
    the headers is still alice, a member of proj-a."""
    forged = {'X-Project-Id': compute.mode.project('bob'),
              'X-Tenant-Id': compute.mode.project('bob'),
              'X-Roles': 'admin', 'X-User-Id': 'admin',
              'OpenStack-System-Scope': 'all', 'X-Is-Admin-Project': 'True'}
    listed = _listed(compute.call('alice', 'GET', '/servers',
                                  headers=forged))
    assert compute.servers['alice'] in listed
    assert compute.servers['bob'] not in listed
    resp = compute.call('alice', 'GET', '/servers/' + compute.servers['bob'],
                        headers=forged)
    assert resp.status_code == 404, resp.text
    resp = compute.call('alice', 'GET', '/os-services', headers=forged)
    assert resp.status_code == 403, resp.text


# -- os-services -----------------------------------------------------------


@pytest.mark.parametrize('user, status', [
    ('admin', 200), ('nova', 200), ('alice', 403), ('svc', 403),
    ('sysadmin', 403), ('domadmin', 403)])
def test_services_are_the_admins(compute, user, status):
    resp = compute.call(user, 'GET', '/os-services')
    assert resp.status_code == status, resp.text
    if status != 200:
        return
    (service,) = resp.json()['services']
    resp = compute.call(user, 'PUT', '/os-services/' + service['id'],
                        {'status': 'enabled'},
                        headers={'OpenStack-API-Version': 'compute 2.53'})
    assert resp.status_code == 200, resp.text


def test_a_member_cannot_force_a_host_down(compute):
    (service,) = compute.call('admin', 'GET', '/os-services').json()[
        'services']
    resp = compute.call('alice', 'PUT', '/os-services/' + service['id'],
                        {'forced_down': True},
                        headers={'OpenStack-API-Version': 'compute 2.53'})
    assert resp.status_code == 403, resp.text
    again = compute.call('admin', 'GET', '/os-services').json()['services']
    assert again[0]['forced_down'] is False


# -- external events -----------------------------------------------------


@pytest.mark.parametrize('user, service_token, status', [
    ('svc', False, 200), ('admin', False, 200), ('nova', False, 200),
    # A user's token with Nova's service token: the policy reads the
    # user's roles, as Nova's.
    ('alice', True, 403), ('alice', False, 403), ('dave', False, 403),
    ('bob', False, 403), ('sysadmin', False, 403),
    ('domadmin', False, 403)])
def test_events_are_a_services_or_an_admins(compute, user, service_token,
                                            status):
    server = compute.servers['alice']
    resp = compute.call(user, 'POST', '/os-server-external-events',
                        {'events': [{'name': 'accelerator-request-bound',
                                     'server_uuid': server,
                                     'tag': str(uuid.uuid4()),
                                     'status': 'failed'}]},
                        service_token=service_token)
    assert resp.status_code == status, resp.text
    if status == 200:
        assert resp.json()['events'][0]['code'] == 200
    show = compute.call('alice', 'GET', '/servers/' + server)
    assert show.json()['server']['status'] == 'ACTIVE'


# -- http_basic ------------------------------------------------------------


@pytest.fixture(scope='module')
def basic_compute(tmp_path_factory):
    """The compute API with ``http_basic``: the htpasswd and identity
    files of ``conftest.HttpBasic`` (the same users, projects and
    roles as in Keystone)."""
    mode = conftest.HttpBasic(tmp_path_factory.mktemp('basic'))
    with PlacementFixture() as placement:
        overrides = {
            (None, 'state_path'): str(tmp_path_factory.mktemp('shim')),
            (None, 'host'): 'basic-compute',
            ('compute', 'hypervisor_hostnames'): ['basic-node'],
            ('compute', 'api_port'): 0,
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): placement.endpoint,
            ('cyborg', 'auth_type'): 'none',
            ('database', 'sync_on_startup'): True}
        overrides.update(mode.api_overrides)
        with ComputeService(shim_conf.build_conf(
                overrides=overrides)) as service:
            service.mode = mode
            service.call = lambda *a, **kw: _call(service, *a, **kw)
            service.servers = {'alice': _boot(service, 'alice'),
                               'bob': _boot(service, 'bob')}
            yield service


def test_http_basic_users_act_in_their_project(basic_compute):
    compute = basic_compute
    # Each call also sends X-Roles: admin, which is ignored.
    listed = _listed(compute.call('alice', 'GET', '/servers'))
    assert listed == {compute.servers['alice']}
    resp = compute.call('alice', 'GET', '/servers/' + compute.servers['bob'])
    assert resp.status_code == 404, resp.text
    assert compute.call('alice', 'GET', '/servers?all_tenants=1'
                        ).status_code == 403
    assert compute.servers['bob'] in _listed(
        compute.call('admin', 'GET', '/servers?all_tenants=1'))
    resp = compute.call('alice', 'GET', '/servers',
                        headers=compute.mode.bad_headers())
    assert resp.status_code == 401, resp.text
    assert resp.headers['WWW-Authenticate'].startswith('Basic realm=')
    assert resp.json()['unauthorized']['code'] == 401


@pytest.mark.parametrize('user, status', [('alice', 403), ('dave', 403),
                                          ('svc', 200), ('admin', 200)])
def test_http_basic_events_are_a_services(basic_compute, user, status):
    resp = basic_compute.call(user, 'POST', '/os-server-external-events', {
        'events': [{'name': 'network-changed',
                    'server_uuid': basic_compute.servers['alice']}]})
    assert resp.status_code == status, resp.text


@pytest.mark.parametrize('action', sorted(server_actions.ACTIONS))
def test_every_action_is_guarded(compute, action):
    """Each action the API knows: another project's member gets a 404, a
    reader of the project a 403 naming the action's rule, and nothing
    changes."""
    server = compute.servers['alice']
    rule = server_actions.ACTIONS[action][0]
    for user, status in (('bob', 404), ('dave', 403), ('svc', 403)):
        resp = compute.call(user, 'POST', '/servers/%s/action' % server,
                            {action: ACTION_BODIES.get(action)})
        assert resp.status_code == status, (user, resp.text)
        if status == 403:
            assert rule in resp.json()['forbidden']['message']
    show = compute.call('alice', 'GET', '/servers/' + server)
    assert show.json()['server']['status'] == 'ACTIVE'


def test_flavors_need_a_token_and_no_role(compute):
    for user in ('alice', 'dave', 'svc'):
        assert compute.call(user, 'GET', '/flavors').status_code == 200
    assert compute.call(None, 'GET', '/flavors').status_code == 401
