"""Base rules that the resource rules build on, with upstream's names and
check strings (Cyborg 2026.2, secure RBAC).

The roles are Keystone's: ``admin`` implies ``manager``, which implies
``member``, which implies ``reader``; ``service`` stands apart, for
service users such as Nova's. Tokens from Keystone list the implied
roles; the other authentication modes expand them the same way
(:func:`cyborg_lite.context.with_implied_roles`).

Upstream also keeps legacy rules (``admin_or_owner`` and the like) as
deprecated alternatives while ``[oslo_policy] enforce_new_defaults`` is
False; cyborg-lite has only the new defaults.
"""

from oslo_policy import policy

RULES = [
    policy.RuleDefault('admin_api', 'role:admin',
                       description='Cloud administrator.'),
    policy.RuleDefault('project_admin_api',
                       'role:admin and project_id:%(project_id)s',
                       description='An administrator of the project.'),
    policy.RuleDefault('project_manager_api',
                       'role:manager and project_id:%(project_id)s',
                       description='A manager of the project.'),
    policy.RuleDefault('project_member_api',
                       'role:member and project_id:%(project_id)s',
                       description='A member of the project.'),
    policy.RuleDefault('project_reader_api',
                       'role:reader and project_id:%(project_id)s',
                       description='A reader of the project.'),
    policy.RuleDefault('service_api', 'role:service',
                       description='A service user, such as Nova.'),
    policy.RuleDefault('project_member_or_admin',
                       'rule:project_member_api or rule:admin_api',
                       description='A member of the project, or an admin.'),
    policy.RuleDefault('project_reader_or_admin',
                       'rule:project_reader_api or rule:admin_api',
                       description='A reader of the project, or an admin.'),
    policy.RuleDefault('project_manager_or_admin',
                       'rule:project_manager_api or rule:admin_api',
                       description='A manager of the project, or an '
                                   'admin.'),
    policy.RuleDefault('project_member_or_service',
                       'rule:project_member_api or rule:service_api',
                       description='A member of the project, or a service '
                                   'user.'),
]
