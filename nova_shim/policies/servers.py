"""Rules of ``/servers`` and the server actions Nova names under
``os_compute_api:servers``."""

from nova_shim.policies import base

SERVERS = 'os_compute_api:servers:%s'
ACTION = '/servers/{server_id}/action (%s)'

RULES = [
    base.project_rule(SERVERS % 'index', base.PROJECT_READER_OR_ADMIN,
                      'List the servers of the caller\'s project.',
                      ('GET', '/servers')),
    base.project_rule(SERVERS % 'detail', base.PROJECT_READER_OR_ADMIN,
                      'List the servers of the caller\'s project, with '
                      'details.', ('GET', '/servers/detail')),
    base.project_rule(SERVERS % 'index:get_all_tenants', base.ADMIN,
                      'List the servers of every project (all_tenants).',
                      ('GET', '/servers')),
    base.project_rule(SERVERS % 'detail:get_all_tenants', base.ADMIN,
                      'List the servers of every project, with details '
                      '(all_tenants).', ('GET', '/servers/detail')),
    base.project_rule(SERVERS % 'show', base.PROJECT_READER_OR_ADMIN,
                      'Show a server.', ('GET', '/servers/{server_id}')),
    base.project_rule(SERVERS % 'create', base.PROJECT_MEMBER_OR_ADMIN,
                      'Create servers.', ('POST', '/servers')),
    base.project_rule(SERVERS % 'delete', base.PROJECT_MEMBER_OR_ADMIN,
                      'Delete a server.', ('DELETE', '/servers/{server_id}')),
    base.project_rule(SERVERS % 'start', base.PROJECT_MEMBER_OR_ADMIN,
                      'Start a stopped server.',
                      ('POST', ACTION % 'os-start')),
    base.project_rule(SERVERS % 'stop', base.PROJECT_MEMBER_OR_ADMIN,
                      'Stop a server.', ('POST', ACTION % 'os-stop')),
    base.project_rule(SERVERS % 'reboot', base.PROJECT_MEMBER_OR_ADMIN,
                      'Reboot a server.', ('POST', ACTION % 'reboot')),
    base.project_rule(SERVERS % 'rebuild', base.PROJECT_MEMBER_OR_ADMIN,
                      'Rebuild a server.', ('POST', ACTION % 'rebuild')),
    base.project_rule(SERVERS % 'resize', base.PROJECT_MEMBER_OR_ADMIN,
                      'Resize a server.', ('POST', ACTION % 'resize')),
    base.project_rule(SERVERS % 'confirm_resize',
                      base.PROJECT_MEMBER_OR_ADMIN,
                      'Confirm a server\'s resize or migration.',
                      ('POST', ACTION % 'confirmResize')),
    base.project_rule(SERVERS % 'revert_resize',
                      base.PROJECT_MEMBER_OR_ADMIN,
                      'Revert a server\'s resize or migration.',
                      ('POST', ACTION % 'revertResize')),
    base.project_rule(SERVERS % 'create_image', base.PROJECT_MEMBER_OR_ADMIN,
                      'Snapshot a server into an image.',
                      ('POST', ACTION % 'createImage')),
]
