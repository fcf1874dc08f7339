"""Rules for devices, deployables and attributes: hardware inventory is
for admins only."""

from cyborg_lite.policies._rule import rule

RULES = [
    rule('cyborg:device:get_all', 'rule:admin_api', 'List devices.',
         'GET', '/v2/devices'),
    rule('cyborg:device:get_one', 'rule:admin_api', 'Show a device.',
         'GET', '/v2/devices/{uuid}'),
    rule('cyborg:device:enable', 'rule:admin_api', 'Enable a device.',
         'POST', '/v2/devices/{uuid}/enable'),
    rule('cyborg:device:disable', 'rule:admin_api', 'Disable a device.',
         'POST', '/v2/devices/{uuid}/disable'),
    rule('cyborg:deployable:get_all', 'rule:admin_api',
         'List deployables.', 'GET', '/v2/deployables'),
    rule('cyborg:deployable:get_one', 'rule:admin_api',
         'Show a deployable.', 'GET', '/v2/deployables/{uuid}'),
    rule('cyborg:deployable:program', 'rule:admin_api',
         'Program an FPGA deployable.', 'PATCH',
         '/v2/deployables/{uuid}/program'),
    rule('cyborg:attribute:get_all', 'rule:admin_api', 'List attributes.',
         'GET', '/v2/attributes'),
    rule('cyborg:attribute:get_one', 'rule:admin_api',
         'Show an attribute.', 'GET', '/v2/attributes/{uuid}'),
    rule('cyborg:attribute:create', 'rule:admin_api',
         'Create an attribute.', 'POST', '/v2/attributes'),
    rule('cyborg:attribute:delete', 'rule:admin_api',
         'Delete an attribute.', 'DELETE', '/v2/attributes/{uuid}'),
]
