"""Base rules that the resource rules build on, with upstream's names and
check strings (Cyborg 2026.2, secure RBAC).

The roles are Keystone's: ``admin`` implies ``manager``, which implies
``member``, which implies ``reader``; ``service`` stands apart, for
service users such as Nova's. Tokens from Keystone list the implied
roles; the other authentication modes expand them the same way
(``cyborg_lite.context.with_implied_roles``).

Upstream also keeps legacy rules (``admin_or_owner`` and the like) as
deprecated alternatives while ``[oslo_policy] enforce_new_defaults`` is
False; cyborg-lite has only the new defaults.
"""

from oslo_policy import policy

from lite_common import policy as common_policy

RULES = [
    policy.RuleDefault('admin_api', 'role:admin',
                       description='Cloud administrator.'),
    policy.RuleDefault('project_admin_api',
                       'role:admin and project_id:%(project_id)s',
                       description='An administrator of the project.'),
    *common_policy.persona_rules('admin_api'),
    policy.RuleDefault('project_member_or_service',
                       'rule:project_member_api or rule:service_api',
                       description='A member of the project, or a service '
                                   'user.'),
]
