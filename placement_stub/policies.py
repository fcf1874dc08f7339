"""Policy: the rule names and defaults of Placement, enforced by oslo.policy.

The rule names are Placement's own (``placement:resource_providers:list``
and so on), so an operator's ``policy.yaml`` written for Placement works
here unchanged. Every API rule defaults to "admin or service", but the
reshaper (the service only) and the total usages of a project, which
that project's readers may read too.
Each rule is scoped to projects: with ``[oslo_policy] enforce_scope`` (on
by default) a system-scoped token is refused. With ``enforce_new_defaults``
off, the deprecated default ``role:admin`` is accepted beside each base
rule, as Placement does.
"""

from oslo_log import versionutils
from oslo_policy import policy

from placement_stub import exception

ADMIN_API = 'admin_api'
ADMIN_OR_SERVICE = 'rule:admin_or_service_api'
SERVICE = 'rule:service_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE = (
    'rule:admin_or_project_reader_or_service_api')

_DEPRECATED_ADMIN = policy.DeprecatedRule(
    name='rule:admin_api', check_str='role:admin',
    deprecated_reason='Placement policies have new default roles with '
                      'scope types.',
    deprecated_since=versionutils.deprecated.WALLABY)

# (name, check string, description) of the rules the API rules refer to.
BASE_RULES = [
    (ADMIN_API, 'role:admin', 'Default rule for most placement APIs.'),
    ('service_api', 'role:service',
     'Default rule for service-to-service placement APIs.'),
    ('admin_or_service_api', 'role:admin or role:service',
     'Default rule for most placement APIs.'),
    ('project_reader_api', 'role:reader and project_id:%(project_id)s',
     'Default rule for project level reader APIs.'),
    ('admin_or_project_reader_or_service_api',
     'role:admin or rule:project_reader_api or role:service',
     'Default rule for project level reader APIs.'),
]

# One rule per API operation: (name, check string).
API_RULES = [
    ('placement:resource_providers:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'create', 'show', 'update', 'delete')
] + [
    ('placement:resource_providers:inventories:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'create', 'show', 'update', 'delete')
] + [
    ('placement:resource_providers:aggregates:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'update')
] + [
    ('placement:resource_providers:traits:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'update', 'delete')
] + [
    ('placement:resource_classes:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'create', 'show', 'update', 'delete')
] + [
    ('placement:traits:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'show', 'update', 'delete')
] + [
    ('placement:allocations:%s' % op, ADMIN_OR_SERVICE)
    for op in ('list', 'manage', 'update', 'delete')
] + [
    ('placement:resource_providers:allocations:list', ADMIN_OR_SERVICE),
    ('placement:resource_providers:usages', ADMIN_OR_SERVICE),
    ('placement:usages', ADMIN_OR_PROJECT_READER_OR_SERVICE),
    ('placement:allocation_candidates:list', ADMIN_OR_SERVICE),
    ('placement:reshaper:reshape', SERVICE),
]


def list_rules():
    """Every rule with its default, for the enforcer and the policy
    generator. The base rules but ``admin_api`` itself fall back to the
    deprecated ``role:admin`` while new defaults are not enforced."""
    rules = []
    for name, check, description in BASE_RULES:
        rules.append(policy.RuleDefault(
            name, check, description=description, scope_types=['project'],
            deprecated_rule=None if name == ADMIN_API
            else _DEPRECATED_ADMIN))
    for name, check in API_RULES:
        rules.append(policy.RuleDefault(
            name, check, description='Placement API: %s.' % name,
            scope_types=['project']))
    return rules


class PolicyNotAuthorized(exception.PlacementException):
    """The caller may not do this (403)."""

    msg_fmt = 'Policy does not allow %(action)s to be performed.'


def make_enforcer(conf):
    """An enforcer of ``list_rules`` reading ``conf``'s
    ``[oslo_policy]`` (policy file, new defaults, scope)."""
    enforcer = policy.Enforcer(conf)
    enforcer.suppress_default_change_warnings = True
    enforcer.suppress_deprecation_warnings = True
    enforcer.register_defaults(list_rules())
    enforcer.load_rules()
    return enforcer


def enforcer_for_tools():
    """The enforcer of the oslopolicy tools (entry point
    ``oslo.policy.enforcer``): on the global ``cfg.CONF`` that they
    parse."""
    from oslo_config import cfg
    enforcer = policy.Enforcer(cfg.CONF)
    enforcer.register_defaults(list_rules())
    return enforcer


def authorize(enforcer, ctx, action, target=None):
    """Raise ``PolicyNotAuthorized`` unless ``ctx`` may do
    ``action`` on ``target`` (by default, the caller's own project)."""
    if target is None:
        target = {'project_id': ctx.project_id, 'user_id': ctx.user_id}
    try:
        enforcer.authorize(action, target, ctx, do_raise=True,
                           exc=PolicyNotAuthorized, action=action)
    except policy.InvalidScope:
        raise PolicyNotAuthorized(action=action)
