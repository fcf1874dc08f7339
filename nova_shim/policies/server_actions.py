"""Rules of the server actions Nova names after their API extensions:
pause, rescue, shelve, backup, evacuate, migrate and suspend (one rule
prefix per extension, as Nova's ``nova/policies`` modules)."""

from nova_shim.policies import base

ACTION = '/servers/{server_id}/action (%s)'
PAUSE = 'os_compute_api:os-pause-server:%s'
SHELVE = 'os_compute_api:os-shelve:%s'
MIGRATE = 'os_compute_api:os-migrate-server:%s'
SUSPEND = 'os_compute_api:os-suspend-server:%s'

RULES = [
    base.project_rule(PAUSE % 'pause', base.PROJECT_MEMBER_OR_ADMIN,
                      'Pause a server.', ('POST', ACTION % 'pause')),
    base.project_rule(PAUSE % 'unpause', base.PROJECT_MEMBER_OR_ADMIN,
                      'Unpause a paused server.',
                      ('POST', ACTION % 'unpause')),
    base.project_rule('os_compute_api:os-rescue',
                      base.PROJECT_MEMBER_OR_ADMIN,
                      'Rescue a server.', ('POST', ACTION % 'rescue')),
    base.project_rule('os_compute_api:os-unrescue',
                      base.PROJECT_MEMBER_OR_ADMIN,
                      'Unrescue a rescued server.',
                      ('POST', ACTION % 'unrescue')),
    base.project_rule(SHELVE % 'shelve', base.PROJECT_MEMBER_OR_ADMIN,
                      'Shelve a server.', ('POST', ACTION % 'shelve')),
    base.project_rule(SHELVE % 'shelve_offload', base.ADMIN,
                      'Offload a shelved server from its host.',
                      ('POST', ACTION % 'shelveOffload')),
    base.project_rule(SHELVE % 'unshelve', base.PROJECT_MEMBER_OR_ADMIN,
                      'Unshelve a shelved server.',
                      ('POST', ACTION % 'unshelve')),
    base.project_rule('os_compute_api:os-create-backup',
                      base.PROJECT_MEMBER_OR_ADMIN,
                      'Back a server up into an image.',
                      ('POST', ACTION % 'createBackup')),
    base.project_rule('os_compute_api:os-evacuate', base.ADMIN,
                      'Rebuild a server of a failed host on another host.',
                      ('POST', ACTION % 'evacuate')),
    base.project_rule(MIGRATE % 'migrate', base.PROJECT_MANAGER_OR_ADMIN,
                      'Cold-migrate a server to another host.',
                      ('POST', ACTION % 'migrate')),
    base.project_rule(MIGRATE % 'migrate:host', base.ADMIN,
                      'Cold-migrate a server to a host the caller names.',
                      ('POST', ACTION % 'migrate')),
    base.project_rule(MIGRATE % 'migrate_live',
                      base.PROJECT_MANAGER_OR_ADMIN,
                      'Live-migrate a server to another host.',
                      ('POST', ACTION % 'os-migrateLive')),
    base.project_rule(MIGRATE % 'migrate_live:host', base.ADMIN,
                      'Live-migrate a server to a host the caller names.',
                      ('POST', ACTION % 'os-migrateLive')),
    base.project_rule(SUSPEND % 'suspend', base.PROJECT_MEMBER_OR_ADMIN,
                      'Suspend a server.', ('POST', ACTION % 'suspend')),
    base.project_rule(SUSPEND % 'resume', base.PROJECT_MEMBER_OR_ADMIN,
                      'Resume a suspended server.',
                      ('POST', ACTION % 'resume')),
]
