"""Rules for accelerator requests.

Non-admins only ever see their own project's ARQs: the conductor scopes
every query. Bind, unbind, ``DELETE ?instance=`` and deleting a bound ARQ
also need a service token; that check is not a policy, so that no
policy file can turn it off.
"""

from cyborg_lite.policies._rule import rule

PATH = '/v2/accelerator_requests'

RULES = [
    rule('cyborg:arq:get_all', 'rule:project_reader_or_admin',
         'List accelerator requests.', 'GET', PATH),
    rule('cyborg:arq:get_one', 'rule:project_reader_or_admin',
         'Show an accelerator request.', 'GET', PATH + '/{uuid}'),
    rule('cyborg:arq:create', 'rule:project_member_or_service',
         'Create accelerator requests.', 'POST', PATH),
    rule('cyborg:arq:update', 'rule:project_member_or_service',
         'Bind or unbind accelerator requests.', 'PATCH', PATH),
    rule('cyborg:arq:delete', 'rule:project_member_or_service',
         'Delete accelerator requests.', 'DELETE', PATH),
]
