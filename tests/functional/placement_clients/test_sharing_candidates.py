"""Allocation candidates with a sharing provider, asked of placement_stub
and of Placement itself: both answer the same."""

import uuid

import pytest
import requests

VERSION = {'OpenStack-API-Version': 'placement 1.36'}


class _Api:
    def __init__(self, endpoint):
        self.endpoint = endpoint
        self.session = requests.Session()
        self.session.headers.update(VERSION)

    def call(self, method, path, body=None, ok=(200, 201, 204)):
        resp = self.session.request(method, self.endpoint + path, json=body,
                                    timeout=10)
        assert resp.status_code in ok, (method, path, resp.text)
        return resp.json() if resp.content else None

    def provider(self, name, inventories, traits=(), aggregates=()):
        rp = self.call('POST', '/resource_providers', {'name': name})
        generation = rp['generation']
        inv = self.call('PUT', '/resource_providers/%s/inventories'
                        % rp['uuid'], {
                            'resource_provider_generation': generation,
                            'inventories': {rc: {'total': total}
                                            for rc, total
                                            in inventories.items()}})
        generation = inv['resource_provider_generation']
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                self.call('PUT', '/traits/' + trait)
        if traits:
            generation = self.call(
                'PUT', '/resource_providers/%s/traits' % rp['uuid'], {
                    'resource_provider_generation': generation,
                    'traits': list(traits)})['resource_provider_generation']
        if aggregates:
            self.call('PUT', '/resource_providers/%s/aggregates'
                      % rp['uuid'], {
                          'resource_provider_generation': generation,
                          'aggregates': list(aggregates)})
        return rp['uuid']


@pytest.fixture
def tree(placement):
    """A compute node with VCPU and a sharing provider of fast disk in
    its aggregate."""
    api = _Api(placement.endpoint)
    tag = uuid.uuid4().hex[:8].upper()
    trait = 'CUSTOM_FAST_' + tag
    aggregate = str(uuid.uuid4())
    cn = api.provider('cn-' + tag, {'VCPU': 8}, aggregates=[aggregate])
    ss = api.provider('ss-' + tag, {'DISK_GB': 100},
                      traits=['MISC_SHARES_VIA_AGGREGATE', trait],
                      aggregates=[aggregate])
    return api, cn, ss, trait


def test_a_resourceless_group_may_pick_a_sharing_provider(tree):
    api, cn, ss, trait = tree
    got = api.call('GET', '/allocation_candidates?resources=VCPU:1'
                   '&resources_A=DISK_GB:1&required_B=%s'
                   '&same_subtree=_A,_B&group_policy=none' % trait)
    # Other tests' providers may be candidates too: those of this tree.
    assert [(r['allocations'], r['mappings'])
            for r in got['allocation_requests']
            if cn in r['allocations']] == [
        ({cn: {'resources': {'VCPU': 1}}, ss: {'resources': {'DISK_GB': 1}}},
         {'': [cn], '_A': [ss], '_B': [ss]})]
