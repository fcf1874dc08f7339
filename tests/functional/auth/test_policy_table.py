"""Every row of the policy table, for every persona, in each
authentication mode (with real Keystone tokens in ``keystone`` mode).

The defaults are upstream Cyborg's (2026.2, secure RBAC), and every rule
is for project-scoped tokens only: a system- or domain-scoped token gets
403 from every rule, whatever its roles. A request that policy lets
through may still fail later (an unknown uuid is a 404, an empty body a
400, a bind without a service token a 403 of its own); the test tells a
policy denial by its message, which names the rule.
"""

import uuid

import pytest

from tests.functional.auth import conftest

RANDOM = str(uuid.uuid4())
ARQS = '/accelerator_requests'

# (rule, method, path, body)
REQUESTS = [
    ('cyborg:arq:get_all', 'GET', ARQS, None),
    ('cyborg:arq:get_one', 'GET', ARQS + '/' + RANDOM, None),
    ('cyborg:arq:create', 'POST', ARQS,
     {'device_profile_name': 'no-such-profile'}),
    ('cyborg:arq:update', 'PATCH', ARQS, {}),
    ('cyborg:arq:delete', 'DELETE', ARQS + '?arqs=' + RANDOM, None),
    ('cyborg:device_profile:get_all', 'GET', '/device_profiles', None),
    ('cyborg:device_profile:get_one', 'GET', '/device_profiles/' + RANDOM,
     None),
    ('cyborg:device_profile:create', 'POST', '/device_profiles', []),
    ('cyborg:device_profile:delete', 'DELETE', '/device_profiles/' + RANDOM,
     None),
    ('cyborg:device:get_all', 'GET', '/devices', None),
    ('cyborg:device:get_one', 'GET', '/devices/' + RANDOM, None),
    ('cyborg:device:enable', 'POST', '/devices/%s/enable' % RANDOM, None),
    ('cyborg:device:disable', 'POST', '/devices/%s/disable' % RANDOM, None),
    ('cyborg:deployable:get_all', 'GET', '/deployables', None),
    ('cyborg:deployable:get_one', 'GET', '/deployables/' + RANDOM, None),
    ('cyborg:deployable:program', 'PATCH',
     '/deployables/%s/program' % RANDOM, []),
    ('cyborg:attribute:get_all', 'GET', '/attributes', None),
    ('cyborg:attribute:get_one', 'GET', '/attributes/' + RANDOM, None),
    ('cyborg:attribute:create', 'POST', '/attributes', {}),
    ('cyborg:attribute:delete', 'DELETE', '/attributes/' + RANDOM, None),
]

READERS = {'admin', 'carol', 'alice', 'bob', 'dave'}
WRITERS = {'admin', 'carol', 'alice', 'bob', 'svc'}
MANAGERS = {'admin', 'carol'}
ADMINS = {'admin'}

# rule -> the personas it lets through (upstream 2026.2's defaults).
ALLOWED = {
    'cyborg:arq:get_all': READERS,
    'cyborg:arq:get_one': READERS,
    'cyborg:arq:create': WRITERS,
    'cyborg:arq:update': WRITERS,
    'cyborg:arq:delete': WRITERS,
    'cyborg:device_profile:get_all': READERS,
    'cyborg:device_profile:get_one': READERS,
    'cyborg:device_profile:create': ADMINS,
    'cyborg:device_profile:delete': ADMINS,
    'cyborg:device:get_all': MANAGERS,
    'cyborg:device:get_one': MANAGERS,
    'cyborg:device:enable': ADMINS,
    'cyborg:device:disable': ADMINS,
    'cyborg:deployable:get_all': MANAGERS,
    'cyborg:deployable:get_one': MANAGERS,
    'cyborg:deployable:program': ADMINS,
    'cyborg:attribute:get_all': MANAGERS,
    'cyborg:attribute:get_one': MANAGERS,
    'cyborg:attribute:create': ADMINS,
    'cyborg:attribute:delete': ADMINS,
}

PROJECT_PERSONAS = ['admin', 'carol', 'alice', 'dave', 'svc']
SCOPED_PERSONAS = list(conftest.SCOPED_USERS)


def test_every_api_rule_is_in_the_table(stack):
    from cyborg_lite import policies
    api_rules = {r.name for r in policies.list_rules()
                 if r.name.startswith('cyborg:')}
    assert api_rules == set(ALLOWED) == {r[0] for r in REQUESTS}


def _denied_by_policy(resp, rule):
    return (resp.status_code == 403 and
            'Access was denied to the following resource: %s' % rule
            in resp.text)


@pytest.mark.parametrize('persona', PROJECT_PERSONAS + SCOPED_PERSONAS)
def test_policy_table(stack, persona):
    caller = stack.caller(persona)
    wrong = []
    for rule, method, path, body in REQUESTS:
        resp = caller.request(method, path, json=body)
        assert resp.status_code < 500, (rule, resp.status_code, resp.text)
        denied = _denied_by_policy(resp, rule)
        if denied == (persona in ALLOWED[rule]):
            wrong.append('%s %s -> %d %s' % (method, path, resp.status_code,
                                             resp.text[:160]))
    assert not wrong, '%s:\n%s' % (persona, '\n'.join(wrong))


@pytest.mark.parametrize('persona', SCOPED_PERSONAS)
def test_tokens_without_a_project_never_reach_arqs(stack, profile, persona):
    """A system- or domain-scoped token neither lists, shows, creates nor
    deletes a project's ARQs, even with the admin role."""
    alice = stack.caller('alice')
    created = alice.post(ARQS, json={'device_profile_name': profile})
    assert created.status_code == 201, created.text
    arq = created.json()['arqs'][0]['uuid']
    other = stack.caller(persona)
    for method, path, body in [
            ('GET', ARQS, None), ('GET', ARQS + '/' + arq, None),
            ('DELETE', ARQS + '?arqs=' + arq, None),
            ('DELETE', ARQS + '/' + arq, None),
            ('POST', ARQS, {'device_profile_name': profile})]:
        resp = other.request(method, path, json=body)
        assert resp.status_code == 403, (method, path, resp.text)
    assert alice.get(ARQS + '/' + arq).status_code == 200
    assert alice.delete(ARQS + '?arqs=' + arq).status_code == 204
