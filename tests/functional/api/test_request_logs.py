"""Log lines name the request that caused them, in oslo.log's format.

The API's context is oslo.context's: it carries the request id (and the
caller's global request id) over RPC, and the conductor's thread makes
it current while it serves the call, so a line the conductor writes
shows ``[global-id req-... user project ...]`` as every OpenStack
service's do.
"""

import uuid

from tests.fixtures import cyborg_api
from tests.fixtures import log_lines
from tests.functional.api import helpers


def test_a_conductor_line_names_the_api_request(stack):
    headers = cyborg_api.member('p-logs')
    profile = helpers.create_profile(stack.client(),
                                     [{'resources:FPGA': '1'}])
    global_id = 'req-%s' % uuid.uuid4()
    with log_lines.captured('cyborg_lite.conductor') as lines:
        resp = stack.client(headers).post(
            '/accelerator_requests',
            json={'device_profile_name': profile['name']},
            headers={'X-OpenStack-Request-ID': global_id})
        assert resp.status_code == 201, resp.text
    request_id = resp.headers['X-OpenStack-Request-ID']
    assert request_id != global_id
    [line] = [line for line in lines if 'Created 1 ARQ' in line]
    assert log_lines.context_part(global_id, request_id,
                                  headers['X-User-Id'], 'p-logs') in line
