import pytest

from cyborg_lite import context
from cyborg_lite import exception


def test_to_dict_carries_every_field_and_round_trips():
    ctx = context.RequestContext(project_id='p', user_id='u',
                                 roles=['member'], service_roles=['service'],
                                 is_service=True)
    data = ctx.to_dict()
    assert set(data) == context._FIELDS
    assert context.RequestContext.from_dict(data) == ctx


def test_to_dict_copies_the_role_lists():
    ctx = context.RequestContext(roles=['member'])
    ctx.to_dict()['roles'].append('admin')
    assert ctx.roles == ['member']


def test_from_dict_ignores_unknown_keys():
    ctx = context.RequestContext.from_dict({'project_id': 'p', 'extra': 1})
    assert ctx.project_id == 'p'


def test_scoped_contexts_round_trip():
    ctx = context.RequestContext(roles=['reader'], system_scope='all')
    assert context.RequestContext.from_dict(ctx.to_dict()) == ctx
    ctx = context.RequestContext(roles=['admin'], domain_id='default')
    assert context.RequestContext.from_dict(ctx.to_dict()) == ctx


@pytest.mark.parametrize('ctx, scope', [
    (context.RequestContext(project_id='p', roles=['member']), 'p'),
    (context.RequestContext(project_id='p', roles=['admin']), None),
    (context.RequestContext.admin(), None),
])
def test_scope_project_of_project_callers_and_services(ctx, scope):
    assert ctx.scope_project == scope


@pytest.mark.parametrize('ctx', [
    context.RequestContext(roles=['member']),
    context.RequestContext(roles=['reader'], system_scope='all'),
    context.RequestContext(roles=['admin'], domain_id='default'),
    context.RequestContext(roles=['member'], domain_id='default'),
    # A project and another scope at once is not a project's token.
    context.RequestContext(project_id='p', roles=['member'],
                           domain_id='default'),
])
def test_callers_without_a_project_see_no_arqs(ctx):
    """The conductor's own check, whatever the API's policy said."""
    with pytest.raises(exception.Forbidden):
        _ = ctx.scope_project
    with pytest.raises(exception.Forbidden):
        _ = ctx.owner_project


def test_implied_roles_follow_keystone():
    assert context.with_implied_roles(['admin']) == [
        'admin', 'manager', 'member', 'reader']
    assert context.with_implied_roles(['manager', 'service']) == [
        'manager', 'service', 'member', 'reader']
    assert context.with_implied_roles(['reader', 'member']) == [
        'reader', 'member']
