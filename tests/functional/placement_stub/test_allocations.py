"""Allocations, usages and allocation candidates over HTTP."""

import uuid

from tests.functional.placement_stub.conftest import assert_error

TREE_INV = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 2048}}


def _alloc(rp, resources, gen=None, project='p1'):
    return {'allocations': {rp: {'resources': resources}},
            'project_id': project, 'user_id': 'u1',
            'consumer_generation': gen}


def test_allocations_and_usages(client):
    rp = client.provider('cn1', inventories=TREE_INV)
    consumer = str(uuid.uuid4())
    url = '/allocations/' + consumer
    assert client.call('PUT', url, _alloc(rp, {'VCPU': 2}),
                       version='1.28').status_int == 204
    got = client.call('GET', url).json
    assert got['allocations'][rp]['resources'] == {'VCPU': 2}
    assert got['consumer_generation'] == 1 and got['project_id'] == 'p1'
    assert_error(client.call('PUT', url, _alloc(rp, {'VCPU': 1}),
                             version='1.28'), 409,
                 'placement.concurrent_update')
    client.call('PUT', url, _alloc(rp, {'VCPU': 1}, gen=1), version='1.28',
                status=204)
    usages = client.call('GET', '/resource_providers/%s/usages' % rp).json
    assert usages['usages'] == {'VCPU': 1, 'MEMORY_MB': 0}
    total = client.call('GET', '/usages?project_id=p1', version='1.9').json
    assert total == {'usages': {'VCPU': 1}}
    by_rp = client.call('GET', '/resource_providers/%s/allocations' % rp,
                        version='1.27')
    assert by_rp.json['allocations'][consumer] == {
        'resources': {'VCPU': 1}}
    # From 1.28 with the consumer's generation, as Placement's.
    by_rp = client.call('GET', '/resource_providers/%s/allocations' % rp,
                        version='1.28')
    assert by_rp.json['allocations'][consumer] == {
        'resources': {'VCPU': 1}, 'consumer_generation': 2}
    assert client.call('DELETE', url).status_int == 204
    assert_error(client.call('DELETE', url), 404)


def test_capacity_exhaustion_and_old_formats(client):
    rp = client.provider('cn1', inventories={'VCPU': {'total': 2}})
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    client.call('PUT', '/allocations/' + first, {
        'allocations': [{'resource_provider': {'uuid': rp},
                         'resources': {'VCPU': 2}}],
        'project_id': 'p', 'user_id': 'u'}, version='1.8', status=204)
    assert_error(client.call('PUT', '/allocations/' + second,
                             _alloc(rp, {'VCPU': 1}), version='1.28'), 409)
    assert_error(client.call('PUT', '/allocations/' + second, {
        'allocations': [{'resource_provider': {'uuid': rp},
                         'resources': {'VCPU': 1}}]}, version='1.8'), 400)
    assert_error(client.call('PUT', '/allocations/' + second,
                             _alloc(rp, {'DISK_GB': 1}), version='1.28'),
                 409)
    ac = client.call('GET', '/allocation_candidates?resources=VCPU:1',
                     version='1.10').json
    assert ac['allocation_requests'] == []
    assert_error(client.call('DELETE',
                             '/resource_providers/%s/inventories' % rp),
                 409, 'placement.inventory.inuse')
    assert_error(client.call('DELETE', '/resource_providers/' + rp), 409,
                 'placement.resource_provider.inuse')


def test_post_allocations(client):
    rp = client.provider('cn1', inventories=TREE_INV)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    body = {a: _alloc(rp, {'VCPU': 1}), b: _alloc(rp, {'VCPU': 3})}
    client.call('POST', '/allocations', body, version='1.28', status=204)
    assert client.call('GET', '/resource_providers/%s/usages' % rp).json[
        'usages']['VCPU'] == 4
    body = {a: _alloc(rp, {'VCPU': 2}, gen=1)}
    assert_error(client.call('POST', '/allocations', body, version='1.28'),
                 409)
    assert_error(client.call('POST', '/allocations', body, version='1.12'),
                 404)


def _tree(client, name, fpga_traits):
    root = client.provider(name, inventories=TREE_INV)
    children = [client.provider('%s_dev%d' % (name, i), parent=root,
                                inventories={'FPGA': {'total': 1}},
                                traits=traits)
                for i, traits in enumerate(fpga_traits)]
    return root, children


def _candidates(client, query, version='1.36', status=200):
    return client.call('GET', '/allocation_candidates?' + query,
                       version=version, status=status).json


def test_nested_groups_land_on_children(client):
    root, (x, y) = _tree(client, 'cn1', [['CUSTOM_X'], ['CUSTOM_Y']])
    found = _candidates(
        client, 'resources=VCPU:1,MEMORY_MB:512'
        '&resources_a=FPGA:1&required_a=CUSTOM_X'
        '&resources_b=FPGA:1&required_b=CUSTOM_Y&group_policy=none')
    assert len(found['allocation_requests']) == 1
    req = found['allocation_requests'][0]
    assert req['mappings'] == {'': [root], '_a': [x], '_b': [y]}
    assert req['allocations'][x] == {'resources': {'FPGA': 1}}
    assert req['allocations'][root] == {
        'resources': {'VCPU': 1, 'MEMORY_MB': 512}}
    summary = found['provider_summaries'][y]
    assert summary['root_provider_uuid'] == root
    assert summary['traits'] == ['CUSTOM_Y']


def test_forbidden_and_any_traits(client):
    _tree(client, 'cn1', [['CUSTOM_X'], ['CUSTOM_Y']])
    forbidden = _candidates(client, 'resources_a=FPGA:1&required_a=!CUSTOM_X')
    assert len(forbidden['allocation_requests']) == 1
    any_of = _candidates(client, 'resources_a=FPGA:1'
                         '&required_a=in:CUSTOM_X,CUSTOM_Y', version='1.39')
    assert len(any_of['allocation_requests']) == 2
    assert_error(client.call('GET', '/allocation_candidates?resources_a='
                             'FPGA:1&required_a=in:CUSTOM_X,CUSTOM_Y',
                             version='1.38'), 400,
                 'placement.undefined_code')
    assert_error(client.call('GET', '/allocation_candidates?resources='
                             'FPGA:1&required=!CUSTOM_X', version='1.21'),
                 400, 'placement.undefined_code')


def test_group_policy_isolate(client):
    root = client.provider('cn1', inventories=TREE_INV)
    for i in range(2):
        client.provider('cn1_dev%d' % i, parent=root,
                        inventories={'FPGA': {'total': 2}})
    query = 'resources_a=FPGA:1&resources_b=FPGA:1&group_policy=%s'
    none = _candidates(client, query % 'none')['allocation_requests']
    isolate = _candidates(client, query % 'isolate')['allocation_requests']
    assert len(none) == 4 and len(isolate) == 2
    for req in isolate:
        assert req['mappings']['_a'] != req['mappings']['_b']
    assert_error(client.call('GET', '/allocation_candidates?resources_a='
                             'FPGA:1&resources_b=FPGA:1', version='1.36'),
                 400)


def test_limit_in_tree_and_versions(client):
    roots = [_tree(client, 'cn%d' % i, [['CUSTOM_X']])[0] for i in range(3)]
    limited = _candidates(client, 'resources=VCPU:1&limit=2')
    assert len(limited['allocation_requests']) == 2
    in_tree = _candidates(client, 'resources=VCPU:1&in_tree=' + roots[1])
    assert list(in_tree['allocation_requests'][0]['allocations']) == [
        roots[1]]
    old = _candidates(client, 'resources=VCPU:1', version='1.10')
    assert isinstance(old['allocation_requests'][0]['allocations'], list)
    assert 'mappings' not in _candidates(
        client, 'resources=VCPU:1', version='1.33')['allocation_requests'][0]
    assert_error(client.call('GET', '/allocation_candidates?resources=VCPU:1',
                             version='1.9'), 404)
    # Malformed parameters carry no code of their own, as in Placement.
    assert_error(client.call('GET', '/allocation_candidates?resources_1='
                             'VCPU:1', version='1.24'), 400,
                 'placement.undefined_code')
    assert_error(client.call('GET', '/allocation_candidates?resources=VCPU'),
                 400, 'placement.undefined_code')
    assert_error(client.call('GET', '/allocation_candidates?resources=NOPE:1'),
                 400)
    assert_error(client.call('GET', '/allocation_candidates?resources=VCPU:1'
                             '&limit=0'), 400)


def test_same_subtree_and_root_required(client):
    root, _ = _tree(client, 'cn1', [['CUSTOM_X']])
    client.call('PUT', '/resource_providers/%s/traits' % root, {
        'traits': ['COMPUTE_NODE'], 'resource_provider_generation': 1},
        status=200)
    ok = _candidates(client, 'resources=VCPU:1&root_required=COMPUTE_NODE')
    assert len(ok['allocation_requests']) == 1
    none = _candidates(client, 'resources=VCPU:1&root_required=!COMPUTE_NODE')
    assert none['allocation_requests'] == []
    same = _candidates(client, 'resources_a=VCPU:1&resources_b=FPGA:1'
                       '&group_policy=none&same_subtree=_a,_b')
    assert len(same['allocation_requests']) == 1


def test_writes_that_add_no_overage_go_through(client):
    """The inventory was lowered below what is used: a write that leaves
    the usage no higher (Nova moving an instance's allocations to its
    migration, an allocation made smaller) goes through, as Placement's
    "reduces existing overage"; one that adds to it is a 409."""
    rp = client.provider('cn-over', inventories={'VCPU': {'total': 8}})
    instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
    client.call('PUT', '/allocations/' + instance, _alloc(rp, {'VCPU': 6}),
                version='1.28', status=204)
    generation = client.call('GET', '/resource_providers/' + rp).json[
        'generation']
    client.call('PUT', '/resource_providers/%s/inventories/VCPU' % rp, {
        'resource_provider_generation': generation, 'total': 4},
        status=200)
    client.call('POST', '/allocations', {
        migration: _alloc(rp, {'VCPU': 6}),
        instance: dict(_alloc(rp, {}, gen=1), allocations={})},
        version='1.28', status=204)
    client.call('PUT', '/allocations/' + migration,
                _alloc(rp, {'VCPU': 5}, gen=1), version='1.28', status=204)
    assert_error(client.call('PUT', '/allocations/' + migration,
                             _alloc(rp, {'VCPU': 6}, gen=2),
                             version='1.28'), 409)
    usages = client.call('GET', '/resource_providers/%s/usages' % rp).json
    assert usages['usages'] == {'VCPU': 5}
