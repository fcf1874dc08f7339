"""The personas of OpenStack's policy defaults, as the services'
rules name them (secure RBAC).

Cyborg's and Nova's rules both build on the same personas of Keystone's
roles: a project's manager, member and reader, and a service user.
Each service names its administrator rule its own way (Cyborg's
``admin_api``, Nova's ``context_is_admin``), and combines the personas
with it (``project_member_or_admin`` and the like).
"""

from oslo_policy import policy

# persona rule -> (check string, description)
PERSONAS = {
    'project_manager_api': ('role:manager and project_id:%(project_id)s',
                            'A manager of the project.'),
    'project_member_api': ('role:member and project_id:%(project_id)s',
                           'A member of the project.'),
    'project_reader_api': ('role:reader and project_id:%(project_id)s',
                           'A reader of the project.'),
    'service_api': ('role:service', 'A service user.'),
}
# combined rule -> (persona rule, description)
OR_ADMIN = {
    'project_manager_or_admin': ('project_manager_api',
                                 'A manager of the project, or an admin.'),
    'project_member_or_admin': ('project_member_api',
                                'A member of the project, or an admin.'),
    'project_reader_or_admin': ('project_reader_api',
                                'A reader of the project, or an admin.'),
}


def persona_rules(admin_rule: str) -> list[policy.RuleDefault]:
    """The persona rules, and each ``project_<persona>_or_admin`` with
    the service's administrator rule ``admin_rule``."""
    rules = [policy.RuleDefault(name, check, description=description)
             for name, (check, description) in PERSONAS.items()]
    rules += [policy.RuleDefault(name, 'rule:%s or rule:%s'
                                 % (persona, admin_rule),
                                 description=description)
              for name, (persona, description) in OR_ADMIN.items()]
    return rules
