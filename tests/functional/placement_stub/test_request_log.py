"""Placement's request log: one INFO line per request, naming it."""

import uuid

import requests

from placement_stub.fixture import PlacementFixture
from tests.fixtures import log_lines


def test_each_request_is_logged_with_its_ids():
    fixture = PlacementFixture()
    fixture.start()
    try:
        global_id = 'req-%s' % uuid.uuid4()
        with log_lines.captured('placement_stub.requestlog') as lines:
            resp = requests.get(
                fixture.endpoint + '/traits?name=in:HW_CPU_X86_AVX',
                headers={'X-OpenStack-Request-ID': global_id,
                         'OpenStack-API-Version': 'placement 1.6',
                         'X-Auth-Token': 'admin'}, timeout=10)
            assert resp.status_code == 200, resp.text
            refused = requests.get(fixture.endpoint + '/nowhere',
                                   timeout=10)
            assert refused.status_code == 404
    finally:
        fixture.stop()
    request_id = resp.headers['X-OpenStack-Request-ID']
    [line] = [line for line in lines if '/traits' in line]
    assert log_lines.context_part(global_id, request_id, 'admin',
                                  'admin') in line, line
    assert ('"GET /traits?name=in:HW_CPU_X86_AVX" status: 200 len: %s '
            'microversion: 1.6' % len(resp.content)) in line, line
    # A request refused before its full context: its own ids.
    [line] = [line for line in lines if '/nowhere' in line]
    assert refused.headers['X-OpenStack-Request-ID'] in line, line
    assert global_id not in line and request_id not in line, line
