"""The caller's identity under noauth2, as placement_stub reads it."""

from placement_stub import deploy


def identity(**headers):
    return deploy.noauth_identity(
        {k.replace('_', '-'): v for k, v in headers.items()})


def test_identity_headers_win():
    assert identity(X_User_Id='u', X_Project_Id='p',
                    X_Roles='member, reader', X_Auth_Token='admin') == (
        'u', 'p', ['member', 'reader'], None)


def test_token_names_user_and_project_as_in_placement():
    assert identity(X_Auth_Token='admin') == (
        'admin', 'admin', ['admin'], None)
    assert identity(X_Auth_Token='alice:proj') == (
        'alice', 'proj', [], None)
    assert identity(X_Auth_Token='bob', X_Roles='reader') == (
        'bob', 'bob', ['reader'], None)


def test_no_token_is_the_admin():
    """The stub's one addition: no token (or keystoneauth's placeholder)
    and no roles is the admin, where Placement answers 401."""
    for headers in ({}, {'X_Auth_Token': 'notused'}):
        assert identity(**headers) == ('admin', 'admin', ['admin'], None)


def test_system_scope_has_no_project():
    assert identity(X_Auth_Token='admin', X_Roles='admin',
                    OpenStack_System_Scope='all') == (
        'admin', None, ['admin'], 'all')


def test_an_authenticated_caller_is_what_its_auth_set():
    """Behind keystonemiddleware or http_basic, the token never names a
    user or a project: a domain-scoped token (no X-Project-Id) has no
    project, so no project-scoped rule admits it."""
    headers = {'X-User-Id': 'u1', 'X-Roles': 'admin,member',
               'X-Domain-Id': 'd1', 'X-Auth-Token': 'gAAAAABtoken'}
    assert deploy.authenticated_identity(headers) == (
        'u1', None, ['admin', 'member'], None)
    assert deploy.authenticated_identity(dict(
        headers, **{'X-Project-Id': 'p1'})) == (
        'u1', 'p1', ['admin', 'member'], None)


def test_a_domain_scoped_admin_is_refused(tmp_path):
    """The stub's context under auth_strategy keystone, given what
    keystonemiddleware leaves for a domain-scoped admin token: 403."""
    import webtest
    from placement_stub import conf as placement_conf
    from placement_stub.db import api as db_api
    from placement_stub import guard
    from placement_stub import handler
    from placement_stub import policies
    conf = placement_conf.build_conf(overrides={
        ('api', 'auth_strategy'): 'keystone',
        ('placement_database', 'connection'):
            'sqlite:///%s' % (tmp_path / 'p.db')})
    facade = db_api.create_facade(conf)
    db_api.sync(facade)
    app = webtest.TestApp(deploy.ContextMiddleware(
        guard.RequestGuard(handler.dispatch), facade,
        policies.make_enforcer(conf), conf))
    domain_admin = {'X-User-Id': 'u1', 'X-Roles': 'admin,member,reader',
                    'X-Domain-Id': 'd1', 'X-Auth-Token': 'gAAAAABtoken'}
    app.get('/resource_providers', headers=domain_admin, status=403)
    project_admin = {'X-User-Id': 'u1', 'X-Roles': 'admin,member,reader',
                     'X-Project-Id': 'p1', 'X-Project-Domain-Id': 'd1',
                     'X-Auth-Token': 'gAAAAABtoken'}
    app.get('/resource_providers', headers=project_admin, status=200)
