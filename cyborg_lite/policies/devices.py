"""Rules for devices, deployables and attributes: a project's managers
may read the hardware inventory (for capacity planning), and only admins
change it."""

from cyborg_lite.policies._rule import rule

READ = 'rule:project_manager_or_admin'
MANAGE = 'rule:admin_api'

RULES = [
    rule('cyborg:device:get_all', READ, 'List devices.',
         'GET', '/v2/devices'),
    rule('cyborg:device:get_one', READ, 'Show a device.',
         'GET', '/v2/devices/{uuid}'),
    rule('cyborg:device:enable', MANAGE, 'Enable a device.',
         'POST', '/v2/devices/{uuid}/enable'),
    rule('cyborg:device:disable', MANAGE, 'Disable a device.',
         'POST', '/v2/devices/{uuid}/disable'),
    rule('cyborg:deployable:get_all', READ, 'List deployables.',
         'GET', '/v2/deployables'),
    rule('cyborg:deployable:get_one', READ, 'Show a deployable.',
         'GET', '/v2/deployables/{uuid}'),
    rule('cyborg:deployable:program', MANAGE, 'Program an FPGA deployable.',
         'PATCH', '/v2/deployables/{uuid}/program'),
    rule('cyborg:attribute:get_all', READ, 'List attributes.',
         'GET', '/v2/attributes'),
    rule('cyborg:attribute:get_one', READ, 'Show an attribute.',
         'GET', '/v2/attributes/{uuid}'),
    rule('cyborg:attribute:create', MANAGE, 'Create an attribute.',
         'POST', '/v2/attributes'),
    rule('cyborg:attribute:delete', MANAGE, 'Delete an attribute.',
         'DELETE', '/v2/attributes/{uuid}'),
]
