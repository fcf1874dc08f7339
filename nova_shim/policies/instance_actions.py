"""Rules of ``/servers/{server_id}/os-instance-actions``: a server's
actions and their events (Nova's ``os-instance-actions``)."""

from nova_shim.policies import base

INSTANCE_ACTIONS = 'os_compute_api:os-instance-actions:%s'
LIST_PATH = '/servers/{server_id}/os-instance-actions'
SHOW_PATH = '/servers/{server_id}/os-instance-actions/{request_id}'

RULES = [
    base.project_rule(INSTANCE_ACTIONS % 'events:details', base.ADMIN,
                      'Show the "details" of a server\'s action events '
                      '(what a failed event failed with; from 2.84).',
                      ('GET', SHOW_PATH)),
    base.project_rule(INSTANCE_ACTIONS % 'events', base.ADMIN,
                      'Show the events of a server\'s action with their '
                      'tracebacks and (from 2.62) hosts; before 2.51, the '
                      'events at all.', ('GET', SHOW_PATH)),
    base.project_rule(INSTANCE_ACTIONS % 'list', base.PROJECT_READER_OR_ADMIN,
                      'List the actions of a server.', ('GET', LIST_PATH)),
    base.project_rule(INSTANCE_ACTIONS % 'show', base.PROJECT_READER_OR_ADMIN,
                      'Show one action of a server, with its events.',
                      ('GET', SHOW_PATH)),
]
