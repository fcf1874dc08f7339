"""One identity setup per authentication strategy, for the auth tests.

Each mode knows the same users:

=========  ===========  =====================  ==================
user       project      roles                  service role
=========  ===========  =====================  ==================
admin      admin        admin, member, reader  no
alice      proj-a       member, reader         no
bob        proj-b       member, reader         no
carol      proj-a       manager                no
dave       proj-a       reader                 no
svc        proj-a       service                no
nova       service      admin                  yes (service token)
cyborg     service      admin, service         (Placement, auth_token)
placement  service      admin, service         (auth_token)
=========  ===========  =====================  ==================

and turns "alice, acting through Nova with a service token" into the
credentials of its strategy: identity headers (noauth), basic auth with
an htpasswd file and an identity file (http_basic), or Keystone tokens
from a real Keystone (keystone; skipped when it is not installed).

Keystone and noauth also know users whose tokens have no project
(``SCOPED_USERS``): a system-scoped admin and reader, and a domain-scoped
admin and member of the ``default`` domain. http_basic has no such
identities: its users always act in a project.
"""

import base64
import uuid

import bcrypt
import pytest
import requests
import yaml

from keystonemiddleware import auth_token
from keystoneauth1 import loading as ks_loading

from tests.fixtures import cyborg_api
from tests.functional.auth import keystone_server

PASSWORD = 'secret-%s'
USERS = {
    'admin': ('admin', ['admin', 'member', 'reader'], []),
    'alice': ('proj-a', ['member', 'reader'], []),
    'bob': ('proj-b', ['member', 'reader'], []),
    'carol': ('proj-a', ['manager'], []),
    'dave': ('proj-a', ['reader'], []),
    'svc': ('proj-a', ['service'], []),
    'nova': ('service', ['admin'], ['service']),
    'cyborg': ('service', ['admin', 'service'], []),
    'placement': ('service', ['admin', 'service'], []),
}

# user -> (scope, roles): a token scoped to the whole system or to the
# default domain, never to a project.
SCOPED_USERS = {
    'sysadmin': ('system', ['admin']),
    'sysreader': ('system', ['reader']),
    'domadmin': ('domain', ['admin']),
    'dommember': ('domain', ['member']),
}


def register_and_set(conf, group, plugin, values):
    """Set keystoneauth/auth_token options that register only on use."""
    if plugin:
        conf.register_opts(ks_loading.get_auth_plugin_conf_options(plugin),
                           group=group)
    for name, value in values.items():
        conf.set_override(name, value, group=group)



def basic_authorization(user: str, password: str) -> str:
    """An HTTP basic ``Authorization`` value (RFC 7617, UTF-8)."""
    pair = ('%s:%s' % (user, password)).encode('utf-8')
    return 'Basic ' + base64.b64encode(pair).decode('ascii')

class NoAuth:
    name = 'noauth'
    api_overrides = {('api', 'auth_strategy'): 'noauth'}
    placement_overrides = {('api', 'auth_strategy'): 'noauth2'}

    def project(self, user):
        return USERS[user][0]

    def headers(self, user, service=False):
        if user in SCOPED_USERS:
            scope, roles = SCOPED_USERS[user]
            headers = {'X-User-Id': user, 'X-Roles': ','.join(roles)}
            if scope == 'system':
                headers['X-System-Scope'] = 'all'
            else:
                headers['X-Domain-Id'] = 'default'
            return headers
        project, roles, _ = USERS[user]
        headers = {'X-Project-Id': project, 'X-User-Id': user,
                   'X-Roles': ','.join(roles)}
        if service:
            headers['X-Service-Roles'] = 'service'
        return headers

    def bad_headers(self):
        return None

    def configure_api(self, conf):
        pass

    def nova_shim_conf(self, user, service):
        return {('cyborg', 'auth_type'): 'none'}, None

    def nova_context_extra(self, user, service):
        return {}

    def placement_client(self, conf, endpoint, user='cyborg'):
        conf.set_override('auth_type', 'none', group='placement')
        conf.set_override('endpoint_override', endpoint, group='placement')


class HttpBasic(NoAuth):
    name = 'http_basic'

    def __init__(self, state_dir):
        self.htpasswd = str(state_dir / 'htpasswd')
        self.identities = str(state_dir / 'identities.yaml')
        with open(self.htpasswd, 'w') as f:
            for user in USERS:
                # Few rounds keep each request's bcrypt check cheap.
                hashed = bcrypt.hashpw((PASSWORD % user).encode(),
                                       bcrypt.gensalt(rounds=4))
                f.write('%s:%s\n' % (user, hashed.decode()))
        with open(self.identities, 'w') as f:
            yaml.safe_dump({u: {'project_id': p, 'roles': r,
                                'service_roles': s}
                            for u, (p, r, s) in USERS.items()}, f)
        common = {('api', 'auth_strategy'): 'http_basic',
                  ('api', 'http_basic_auth_user_file'): self.htpasswd,
                  ('api', 'http_basic_identity_file'): self.identities}
        self.api_overrides = self.placement_overrides = common

    def headers(self, user, service=False):
        if user in SCOPED_USERS:
            pytest.skip('http_basic users always act in a project')
        # One credential per request: a service acts as its own user.
        user = 'nova' if service else user
        return {'Authorization': basic_authorization(user, PASSWORD % user),
            # Ignored: identity comes from the identity file only.
            'X-Roles': 'admin', 'X-Service-Roles': 'service'}

    def bad_headers(self):
        return {'Authorization': basic_authorization('alice', 'wrong')}

    def nova_shim_conf(self, user, service):
        user = 'nova' if service else user
        return {('cyborg', 'auth_type'): 'http_basic'}, {
            'username': user, 'password': PASSWORD % user}

    def placement_client(self, conf, endpoint, user='cyborg'):
        register_and_set(conf, 'placement', 'http_basic', {
            'auth_type': 'http_basic', 'username': user,
            'password': PASSWORD % user, 'endpoint': endpoint})
        conf.set_override('endpoint_override', endpoint, group='placement')


class Keystone(NoAuth):
    name = 'keystone'
    api_overrides = {('api', 'auth_strategy'): 'keystone'}
    placement_overrides = {('api', 'auth_strategy'): 'keystone'}

    def __init__(self, server):
        self.server = server
        self.url = server.url
        self.projects = {}
        self.tokens = {}
        admin = self._token('admin', 'admin', keystone_server.ADMIN_PASSWORD)
        self._populate(admin)

    def _call(self, token, method, path, body=None):
        resp = requests.request(method, self.url + path, json=body,
                                headers={'X-Auth-Token': token}, timeout=30)
        assert resp.status_code < 300, resp.text
        return resp.json() if resp.content else None

    def _token(self, user, project, password, scope=None):
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': user, 'domain': {'id': 'default'},
                'password': password}}},
            'scope': scope or {'project': {'name': project,
                                           'domain': {'id': 'default'}}}}}
        resp = requests.post(self.url + '/auth/tokens', json=body,
                             timeout=30)
        assert resp.status_code == 201, resp.text
        return resp.headers['X-Subject-Token']

    def _populate(self, admin):
        roles = {r['name']: r['id'] for r in
                 self._call(admin, 'GET', '/roles')['roles']}
        projects = {p['name']: p['id'] for p in
                    self._call(admin, 'GET', '/projects')['projects']}
        for user, (project, user_roles, service_roles) in USERS.items():
            if project not in projects:
                projects[project] = self._call(
                    admin, 'POST', '/projects',
                    {'project': {'name': project,
                                 'domain_id': 'default'}})['project']['id']
            if user != 'admin':
                user_id = self._call(admin, 'POST', '/users', {'user': {
                    'name': user, 'domain_id': 'default',
                    'password': PASSWORD % user}})['user']['id']
                for role in user_roles + service_roles:
                    self._call(admin, 'PUT', '/projects/%s/users/%s/roles/%s'
                               % (projects[project], user_id, roles[role]))
        self.projects = projects
        for user, (project, _, _) in USERS.items():
            password = (keystone_server.ADMIN_PASSWORD if user == 'admin'
                        else PASSWORD % user)
            self.tokens[user] = self._token(user, project, password)
        self._populate_scoped(admin, roles)

    def _populate_scoped(self, admin, roles):
        """Users with a system or domain role, and their tokens."""
        for user, (scope, user_roles) in SCOPED_USERS.items():
            user_id = self._call(admin, 'POST', '/users', {'user': {
                'name': user, 'domain_id': 'default',
                'password': PASSWORD % user}})['user']['id']
            target = ('/system' if scope == 'system'
                      else '/domains/default')
            for role in user_roles:
                self._call(admin, 'PUT', '%s/users/%s/roles/%s'
                           % (target, user_id, roles[role]))
            token_scope = ({'system': {'all': True}} if scope == 'system'
                           else {'domain': {'id': 'default'}})
            self.tokens[user] = self._token(user, None, PASSWORD % user,
                                            token_scope)

    def project(self, user):
        return self.projects[USERS[user][0]]

    def headers(self, user, service=False):
        headers = {'X-Auth-Token': self.tokens[user],
                   # Ignored: auth_token removes identity headers.
                   'X-Roles': 'admin', 'X-Service-Roles': 'service'}
        if service:
            headers['X-Service-Token'] = self.tokens['nova']
        return headers

    def bad_headers(self):
        return {'X-Auth-Token': 'not-a-token'}

    def authtoken_options(self):
        return {'www_authenticate_uri': self.url, 'auth_url': self.url,
                'auth_type': 'password', 'username': 'cyborg',
                'password': PASSWORD % 'cyborg', 'project_name': 'service',
                'user_domain_id': 'default', 'project_domain_id': 'default',
                'service_token_roles_required': True}

    def configure_api(self, conf):
        conf.register_opts(auth_token.list_opts()[0][1],
                           group='keystone_authtoken')
        ks_loading.register_auth_conf_options(conf, 'keystone_authtoken')
        register_and_set(conf, 'keystone_authtoken', 'password',
                         self.authtoken_options())

    def nova_shim_conf(self, user, service):
        return {}, None

    def nova_context_extra(self, user, service):
        return {'auth_token': self.tokens[user],
                'service_token': self.tokens['nova'] if service else None}

    def placement_client(self, conf, endpoint, user='cyborg'):
        register_and_set(conf, 'placement', 'password', {
            'auth_type': 'password', 'auth_url': self.url, 'username': user,
            'password': PASSWORD % user, 'project_name': USERS[user][0],
            'user_domain_id': 'default', 'project_domain_id': 'default'})
        conf.set_override('endpoint_override', endpoint, group='placement')


@pytest.fixture(scope='module', params=['noauth', 'http_basic', 'keystone'])
def mode(request, tmp_path_factory):
    if request.param == 'noauth':
        return NoAuth()
    if request.param == 'http_basic':
        return HttpBasic(tmp_path_factory.mktemp('basic'))
    return keystone_identities(request.getfixturevalue('keystone'))


def keystone_identities(server):
    """The ``Keystone`` mode of ``server``, whose users and projects
    are created once per Keystone."""
    if getattr(server, 'mode', None) is None:
        server.mode = Keystone(server)
    return server.mode


class Caller:
    def __init__(self, stack, headers):
        self.client = cyborg_api.Client(stack.url + '/v2', {})
        # Only the persona's own identity: none of the client's default
        # admin headers.
        for name in cyborg_api.ADMIN:
            self.client.session.headers.pop(name, None)
        self.client.session.headers.update(headers or {})

    def __getattr__(self, name):
        return getattr(self.client, name)


@pytest.fixture(scope='module')
def stack(mode, tmp_path_factory):
    s = cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack'),
                               overrides=mode.api_overrides)
    mode.configure_api(s.aio.conf)
    with s:
        s.mode = mode
        s.caller = lambda user, service=False: Caller(
            s, mode.headers(user, service))
        yield s


@pytest.fixture(scope='module')
def profile(stack):
    name = 'auth-%s' % uuid.uuid4().hex[:8]
    resp = stack.caller('admin').post('/device_profiles', json=[
        {'name': name, 'groups': [{'resources:FPGA': '1'}]}])
    assert resp.status_code == 201, resp.text
    return name


@pytest.fixture(scope='module')
def fpga(stack):
    deps = stack.caller('admin').get('/deployables')
    assert deps.status_code == 200, deps.text
    host = stack.aio.hostnames[0]
    return next(d for d in deps.json()['deployables']
                if '"FPGA"' in d['attributes_list']
                and d['name'].startswith(host))
