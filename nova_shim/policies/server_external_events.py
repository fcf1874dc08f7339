"""Rule of ``/os-server-external-events``: the events that other
services (Cyborg's ``accelerator-request-bound``) send."""

from nova_shim.policies import base

RULES = [
    base.project_rule('os_compute_api:os-server-external-events:create',
                      base.SERVICE_ROLE,
                      'Send events about servers (a service, such as '
                      'Cyborg, or an admin).',
                      ('POST', '/os-server-external-events')),
]
