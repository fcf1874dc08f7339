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
