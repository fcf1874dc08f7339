from oslo_context import context as oslo_context
import pytest

from cyborg_lite import context
from cyborg_lite import exception


def test_the_rpc_dict_carries_every_field_and_round_trips():
    ctx = context.RequestContext(project_id='p', user_id='u',
                                 roles=['member'], service_roles=['service'],
                                 is_service=True,
                                 global_request_id='req-' + '0' * 36)
    data = ctx.to_rpc_dict()
    assert tuple(data) == context.RPC_FIELDS
    back = context.RequestContext.from_rpc_dict(data)
    assert back == ctx
    assert back.request_id == ctx.request_id
    assert back.global_request_id == ctx.global_request_id


def test_it_is_oslo_contexts_and_reaches_the_logs():
    ctx = context.RequestContext(project_id='p', user_id='u',
                                 roles=['member'])
    assert isinstance(ctx, oslo_context.RequestContext)
    assert ctx.request_id.startswith('req-')
    # Made current for the thread, as oslo.log's formatter finds it.
    assert oslo_context.get_current() is ctx
    values = ctx.get_logging_values()
    assert values['request_id'] == ctx.request_id
    assert values['user_identity'].startswith('u p ')


def test_the_services_context_leaves_the_current_one_alone():
    ctx = context.RequestContext(project_id='p', roles=['member'])
    context.RequestContext.admin()
    assert oslo_context.get_current() is ctx


def test_policy_values_are_oslo_contexts_with_is_admin():
    ctx = context.RequestContext(project_id='p', user_id='u',
                                 roles=['Admin'], system_scope=None)
    values = ctx.to_policy_values()
    assert values['project_id'] == 'p' and values['user_id'] == 'u'
    assert values['is_admin'] is True
    assert values['system_scope'] is None
    assert 'service_roles' in values


def test_the_rpc_dict_copies_the_role_lists():
    ctx = context.RequestContext(roles=['member'])
    ctx.to_rpc_dict()['roles'].append('admin')
    assert ctx.roles == ['member']


def test_from_rpc_dict_ignores_unknown_keys():
    ctx = context.RequestContext.from_rpc_dict({'project_id': 'p', 'extra': 1})
    assert ctx.project_id == 'p'


def test_scoped_contexts_round_trip():
    ctx = context.RequestContext(roles=['reader'], system_scope='all')
    assert context.RequestContext.from_rpc_dict(ctx.to_rpc_dict()) == ctx
    ctx = context.RequestContext(roles=['admin'], domain_id='default')
    assert context.RequestContext.from_rpc_dict(ctx.to_rpc_dict()) == ctx


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
