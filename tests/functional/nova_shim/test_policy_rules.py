"""nova_shim's policy rules are Nova 34's: every rule it defines has the
name, check string and scope types that Nova's own ``nova.policies``
gives it, so that a policy file written for Nova works unchanged, and
every route and action the API serves is guarded by one of them.

Nova's rules are read from Nova itself, in its own virtualenv
(``.venv-nova``, made by ``tools/run-tests.sh``); without it the first
test is skipped.
"""

import json
import subprocess

import pytest

from nova_shim.compute import api
from nova_shim.compute import servers
from nova_shim import policies
from tests.functional.placement_clients import test_nova

NOVA_RULES = """
import json
from nova import policies
print(json.dumps({r.name: [r.check_str, getattr(r, 'scope_types', None)]
                  for r in policies.list_rules()}))
"""


def test_every_rule_is_novas_with_novas_default():
    python = test_nova.nova_python()
    if python is None:
        pytest.skip('Nova is not installed (.venv-nova)')
    result = subprocess.run([python, '-c', NOVA_RULES], capture_output=True,
                            text=True, timeout=120, check=True)
    nova = json.loads(result.stdout)
    ours = {rule.name: [rule.check_str, rule.scope_types]
            for rule in policies.list_rules()}
    differ = {name: (value, nova.get(name)) for name, value in ours.items()
              if nova.get(name) != value}
    assert differ == {}


def test_every_served_action_has_a_rule():
    registered = {rule.name for rule in policies.list_rules()}
    for action, (rule, _call, _with_server) in servers.ACTIONS.items():
        assert rule in registered, action


def test_the_routes_are_the_ones_the_rules_document():
    # A route added without a rule (or a rule's operation that no route
    # serves) shows here.
    documented = {(op['method'], op['path'].split(' (')[0])
                  for rule in policies.list_rules()
                  for op in getattr(rule, 'operations', [])}
    public = {'/', '/openapi.yaml', '/flavors', '/flavors/detail',
              '/flavors/{flavor}'}
    served = set()
    for method, pattern, _handler in api.ROUTES:
        path = (pattern.pattern.strip('^$').replace('/?', '/')
                .replace('(/detail)?', '').replace('(?P<uuid>[^/]+)',
                                                   '{server_id}')
                .replace('(?P<service_id>[^/]+)', '{service_id}')
                .replace('(?P<flavor>[^/]+)', '{flavor}')
                .replace('\\.', '.'))
        if path not in public:
            served.add((method, path))
    served.add(('GET', '/servers/detail'))
    assert served <= documented, served - documented
