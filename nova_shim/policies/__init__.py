"""oslo.policy rules of the compute API, with Nova's names and defaults.

One module per part of the API, as Nova's ``nova/policies``. A policy
file written for Nova works unchanged for the routes nova_shim serves;
``oslopolicy-sample-generator --namespace nova_shim`` writes the sample,
and the oslopolicy tools load the enforcer (entry point
``oslo.policy.enforcer``).
"""

import itertools

from oslo_policy import policy

from nova_shim.policies import base
from nova_shim.policies import flavors
from nova_shim.policies import instance_actions
from nova_shim.policies import migrations
from nova_shim.policies import server_actions
from nova_shim.policies import server_external_events
from nova_shim.policies import servers
from nova_shim.policies import services


def list_rules() -> list[policy.RuleDefault]:
    return list(itertools.chain(base.RULES, servers.RULES,
                                server_actions.RULES, flavors.RULES,
                                services.RULES,
                                server_external_events.RULES,
                                instance_actions.RULES, migrations.RULES))


def make_enforcer(conf) -> policy.Enforcer:
    """An enforcer on ``conf`` (its ``[oslo_policy]`` names the policy
    file) with every default registered."""
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def enforcer_for_tools() -> policy.Enforcer:
    """The enforcer of the oslopolicy tools: on the global ``cfg.CONF``
    that they parse, so that their ``--config-file`` names the policy
    file."""
    from oslo_config import cfg
    return make_enforcer(cfg.CONF)
