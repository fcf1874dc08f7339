from cyborg_lite import context


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
