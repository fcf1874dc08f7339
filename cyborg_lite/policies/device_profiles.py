"""Rules for device profiles: readable by projects, managed by admins."""

from cyborg_lite.policies._rule import rule

PATH = '/v2/device_profiles'

RULES = [
    rule('cyborg:device_profile:get_all', 'rule:project_reader_or_admin',
         'List device profiles.', 'GET', PATH),
    rule('cyborg:device_profile:get_one', 'rule:project_reader_or_admin',
         'Show a device profile.', 'GET', PATH + '/{uuid}'),
    rule('cyborg:device_profile:create', 'rule:admin_api',
         'Create a device profile.', 'POST', PATH),
    rule('cyborg:device_profile:delete', 'rule:admin_api',
         'Delete device profiles.', 'DELETE', PATH),
]
