"""Rules of ``/flavors``: managing flavors and their extra specs (Nova's
``os-flavor-manage`` and ``os-flavor-extra-specs``). Listing and
showing flavors has no rule, as in Nova: any caller may."""

from nova_shim.policies import base

MANAGE = 'os_compute_api:os-flavor-manage:%s'
EXTRA_SPECS = 'os_compute_api:os-flavor-extra-specs:%s'
SPECS_PATH = '/flavors/{flavor_id}/os-extra_specs/'
SPEC_PATH = '/flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}'

RULES = [
    base.project_rule(MANAGE % 'create', base.ADMIN, 'Create a flavor.',
                      ('POST', '/flavors')),
    base.project_rule(MANAGE % 'update', base.ADMIN,
                      'Change a flavor\'s description.',
                      ('PUT', '/flavors/{flavor_id}')),
    base.project_rule(MANAGE % 'delete', base.ADMIN, 'Delete a flavor.',
                      ('DELETE', '/flavors/{flavor_id}')),
    base.project_rule(EXTRA_SPECS % 'index', base.PROJECT_READER_OR_ADMIN,
                      'List a flavor\'s extra specs (and see them in its '
                      'detail, from 2.61).', ('GET', SPECS_PATH),
                      ('POST', '/flavors'), ('GET', '/flavors/detail'),
                      ('GET', '/flavors/{flavor_id}'),
                      ('PUT', '/flavors/{flavor_id}')),
    base.project_rule(EXTRA_SPECS % 'show', base.PROJECT_READER_OR_ADMIN,
                      'Show one extra spec of a flavor.', ('GET', SPEC_PATH)),
    base.project_rule(EXTRA_SPECS % 'create', base.ADMIN,
                      'Add extra specs to a flavor.', ('POST', SPECS_PATH)),
    base.project_rule(EXTRA_SPECS % 'update', base.ADMIN,
                      'Change an extra spec of a flavor.',
                      ('PUT', SPEC_PATH)),
    base.project_rule(EXTRA_SPECS % 'delete', base.ADMIN,
                      'Remove an extra spec from a flavor.',
                      ('DELETE', SPEC_PATH)),
]
