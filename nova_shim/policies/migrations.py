"""Rules of ``GET /os-migrations``, with Nova 34's names and defaults:
a project's manager lists its project's migrations without hosts; an
admin lists every project's, with hosts."""

from nova_shim.policies import base

MIGRATIONS = 'os_compute_api:os-migrations:%s'

RULES = [
    base.project_rule(MIGRATIONS % 'index', base.PROJECT_MANAGER_OR_ADMIN,
                      'List migrations without host info.',
                      ('GET', '/os-migrations')),
    base.project_rule(MIGRATIONS % 'index:all_projects', base.ADMIN,
                      'List migrations for all or cross projects.',
                      ('GET', '/os-migrations')),
    base.project_rule(MIGRATIONS % 'index:host', base.ADMIN,
                      'List migrations with host info.',
                      ('GET', '/os-migrations')),
]
