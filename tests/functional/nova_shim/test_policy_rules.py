"""nova_shim's policy rules are Nova 34's: every rule it defines has the
name, check string and scope types that Nova's own ``nova.policies``
gives it, so that a policy file written for Nova works unchanged, and
every route and action the API serves is guarded by one of them.

Nova's rules are read from Nova itself, in its own virtualenv
(``.venv-nova``, made by ``tools/run-tests.sh``); without it the first
test is skipped.
"""

import json
import re
import subprocess

import pytest

from nova_shim.api import app as api
from nova_shim.api.handlers import server_actions
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
    for action, (rule, _call, _with_server) in server_actions.ACTIONS.items():
        assert rule in registered, action


def test_the_routes_are_the_ones_the_rules_document():
    # A route added without a rule shows here: each route that needs a
    # caller serves a path that some rule's operation documents.
    public = ('/', '/openapi.yaml', '/flavors', '/flavors/detail',
              '/flavors/{flavor_id}')
    documented = {(op['method'], re.sub(r'\{\w+\}', 'sample',
                                        op['path'].split(' (')[0]))
                  for rule in policies.list_rules()
                  for op in getattr(rule, 'operations', [])}
    documented |= {('GET', re.sub(r'\{\w+\}', 'sample', path))
                   for path in public}
    undocumented = [
        (method, pattern.pattern) for method, pattern, _handler in api.ROUTES
        if not any(m == method and pattern.match(path.rstrip('/') or '/')
                   for m, path in documented)]
    assert undocumented == []
