"""Allocation candidates read in slices of root ids give what one pass
over the fleet gives: the same candidates, in the same order, cut at
``limit``."""

import uuid

import pytest

from placement_stub.handlers import allocation_candidate

QUERY = ('/allocation_candidates?resources=VCPU:1'
         '&resources_f=FPGA:1&required_f=CUSTOM_X&group_policy=none')


@pytest.fixture
def small_slices(monkeypatch):
    monkeypatch.setattr(allocation_candidate, 'FIRST_SLICE', 2)
    monkeypatch.setattr(allocation_candidate, 'MIN_SLICE', 1)


def _fleet(client):
    client.call('PUT', '/traits/CUSTOM_X', status=201)
    for i in range(9):
        root = client.provider('cn%d' % i, inventories={
            'VCPU': {'total': 1 if i % 3 else 4}})
        # Trees 0, 3, 6: no FPGA with CUSTOM_X; others: i % 4 + 1 FPGAs.
        for j in range(0 if i % 3 == 0 else i % 4 + 1):
            client.provider('cn%d_f%d' % (i, j), parent=root,
                            inventories={'FPGA': {'total': 1}},
                            traits=['CUSTOM_X'])
        if i == 4:
            client.call('PUT', '/allocations/' + str(uuid.uuid4()), {
                'allocations': {root: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}, version='1.28', status=204)


def test_slices_match_one_pass(client, small_slices):
    _fleet(client)
    whole = client.call('GET', QUERY, version='1.36', status=200).json
    assert len(whole['allocation_requests']) > 8
    for limit in range(1, len(whole['allocation_requests']) + 2):
        got = client.call('GET', QUERY + '&limit=%d' % limit,
                          version='1.36', status=200).json
        expected = whole['allocation_requests'][:limit]
        assert got['allocation_requests'] == expected
        used = {rp for req in expected for rp in req['allocations']}
        roots = {whole['provider_summaries'][rp]['root_provider_uuid']
                 for rp in used}
        assert got['provider_summaries'] == {
            rp: summary
            for rp, summary in whole['provider_summaries'].items()
            if summary['root_provider_uuid'] in roots}
