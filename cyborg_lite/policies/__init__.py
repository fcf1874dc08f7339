"""oslo.policy rules, one module per resource, with upstream's names."""

import itertools

from oslo_policy import policy

from cyborg_lite import exception
from cyborg_lite.policies import accelerator_requests
from cyborg_lite.policies import base
from cyborg_lite.policies import device_profiles
from cyborg_lite.policies import devices


def list_rules():
    return list(itertools.chain(base.RULES, accelerator_requests.RULES,
                                device_profiles.RULES, devices.RULES))


def get_enforcer(conf=None):
    """An enforcer with every default registered (for oslopolicy tools
    and for the API, which passes its own ConfigOpts)."""
    if conf is None:
        from cyborg_lite import conf as cl_conf
        conf = cl_conf.build_conf()
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def authorize(enforcer, rule, ctx):
    """Raise Forbidden unless ``ctx`` may do ``rule``. The target is the
    caller's own project: tenant isolation happens in the conductor."""
    target = {'project_id': ctx.project_id, 'user_id': ctx.user_id}
    if not enforcer.enforce(rule, target, ctx.to_policy_values()):
        raise exception.Forbidden(
            'Access was denied to the following resource: %s' % rule)
