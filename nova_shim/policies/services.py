"""Rules of ``/os-services``: the compute services, admin only."""

from nova_shim.policies import base

SERVICES = 'os_compute_api:os-services:%s'

RULES = [
    base.project_rule(SERVICES % 'list', base.ADMIN,
                      'List the compute services.', ('GET', '/os-services')),
    base.project_rule(SERVICES % 'update', base.ADMIN,
                      'Enable, disable or force down a compute service.',
                      ('PUT', '/os-services/{service_id}')),
]
