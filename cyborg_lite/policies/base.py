"""Base rules that the resource rules build on (upstream's names)."""

from oslo_policy import policy

RULES = [
    policy.RuleDefault('admin_api', 'role:admin',
                       description='Cloud administrator.'),
    policy.RuleDefault('project_admin_api',
                       'role:admin and project_id:%(project_id)s'),
    policy.RuleDefault('project_member_api',
                       'role:member and project_id:%(project_id)s'),
    policy.RuleDefault('project_reader_api',
                       'role:reader and project_id:%(project_id)s'),
    policy.RuleDefault('project_member_or_admin',
                       'rule:project_member_api or rule:admin_api'),
    policy.RuleDefault('project_reader_or_admin',
                       'rule:project_reader_api or rule:admin_api'),
    policy.RuleDefault('service_api', 'role:service',
                       description='A service user, such as Nova.'),
    policy.RuleDefault('project_member_or_service',
                       'rule:project_member_api or rule:service_api or '
                       'rule:admin_api'),
    policy.RuleDefault('is_admin', 'rule:admin_api'),
    policy.RuleDefault('admin_or_owner',
                       'is_admin:True or project_id:%(project_id)s'),
    policy.RuleDefault('default', 'rule:admin_or_owner'),
    policy.RuleDefault('allow', '@'),
    policy.RuleDefault('deny', '!'),
]
