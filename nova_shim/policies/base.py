"""Base rules that the API's rules build on, with Nova's names and check
strings (Nova 34, secure RBAC), so that a policy file written for Nova
works unchanged.

The roles are Keystone's: ``admin`` implies ``manager``, which implies
``member``, which implies ``reader``; ``service`` stands apart, for
service users such as Cyborg's. Nova still lets an admin do what a
service may (``service_or_admin``), and so does nova_shim.
"""

from oslo_policy import policy

from lite_common import policy as common_policy

ADMIN = 'rule:context_is_admin'
PROJECT_MANAGER_OR_ADMIN = 'rule:project_manager_or_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
SERVICE_ROLE = 'rule:service_or_admin'

RULES = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       description='Who is an administrator: sees and '
                                   'acts on every project\'s servers.'),
    *common_policy.persona_rules('context_is_admin'),
    policy.RuleDefault('service_or_admin',
                       'rule:service_api or rule:context_is_admin',
                       description='A service user, or an admin.'),
]


def project_rule(name: str, check_str: str, description: str,
                 *operations: tuple[str, str]) -> policy.DocumentedRuleDefault:
    """A rule of project-scoped tokens (as every Nova rule is) for the
    ``(method, path)`` operations it guards."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}
                    for method, path in operations],
        scope_types=['project'])
