"""Placement queries and bodies built by the scheduler (no I/O)."""

from nova_shim.accelerator import cyborg
from nova_shim import scheduler

ROOT = '11111111-0000-0000-0000-000000000001'
CHILD = '11111111-0000-0000-0000-000000000002'


def fpga_group():
    return scheduler.RequestGroup(
        requester_id='device_profile_0', resources={'FPGA': 1},
        required_traits={'CUSTOM_X', 'CUSTOM_A'},
        forbidden_traits={'CUSTOM_Y'})


def test_flavor_only_query_has_no_group_policy():
    query = scheduler.build_candidates_query(2, 512, 1, [])
    assert query == [('resources', 'DISK_GB:1,MEMORY_MB:512,VCPU:2'),
                     ('limit', '1000')]


def test_zero_disk_is_not_requested():
    query = dict(scheduler.build_candidates_query(1, 64, 0, []))
    assert query['resources'] == 'MEMORY_MB:64,VCPU:1'


def test_device_profile_groups_are_suffixed():
    query = scheduler.build_candidates_query(
        2, 512, 1, [fpga_group(), scheduler.RequestGroup(
            'device_profile_1', {'VGPU': 2})], in_tree=ROOT, limit=5)
    assert query == [
        ('resources', 'DISK_GB:1,MEMORY_MB:512,VCPU:2'),
        ('resourcesdevice_profile_0', 'FPGA:1'),
        ('requireddevice_profile_0', 'CUSTOM_A,CUSTOM_X,!CUSTOM_Y'),
        ('resourcesdevice_profile_1', 'VGPU:2'),
        ('group_policy', 'none'),
        ('in_tree', ROOT),
        ('limit', '5')]


def test_device_profile_to_query():
    dp_groups = [{'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required',
                  'trait:CUSTOM_SLOW': 'forbidden',
                  'accel:bitstream_id': 'd5ca2f11'}]
    groups = cyborg._CyborgClient.get_device_request_groups(dp_groups)
    query = dict(scheduler.build_candidates_query(1, 64, 1, groups))
    assert query['resourcesdevice_profile_0'] == 'FPGA:1'
    assert query['requireddevice_profile_0'] == \
        'CUSTOM_FPGA_INTEL,!CUSTOM_SLOW'
    assert query['group_policy'] == 'none'


def candidates_body():
    return {'allocation_requests': [
                {'allocations': {
                    ROOT: {'resources': {'VCPU': 1, 'MEMORY_MB': 64}},
                    CHILD: {'resources': {'FPGA': 1}}},
                 'mappings': {'': [ROOT], 'device_profile_0': [CHILD]}}],
            'provider_summaries': {
                ROOT: {'root_provider_uuid': ROOT,
                       'parent_provider_uuid': None, 'resources': {}},
                CHILD: {'root_provider_uuid': ROOT,
                        'parent_provider_uuid': ROOT, 'resources': {}}}}


def test_parse_candidates_finds_root_and_mappings():
    (candidate,) = scheduler.parse_candidates(candidates_body())
    assert candidate.root_provider_uuid == ROOT
    assert candidate.mappings['device_profile_0'] == [CHILD]
    assert candidate.allocations[CHILD] == {'FPGA': 1}


def test_parse_no_candidates():
    assert scheduler.parse_candidates(
        {'allocation_requests': [], 'provider_summaries': {}}) == []


def test_allocation_body_is_for_a_new_consumer():
    (candidate,) = scheduler.parse_candidates(candidates_body())
    body = scheduler.build_allocation_body(candidate, 'proj', 'user')
    assert body == {
        'allocations': {ROOT: {'resources': {'VCPU': 1, 'MEMORY_MB': 64}},
                        CHILD: {'resources': {'FPGA': 1}}},
        'consumer_generation': None, 'project_id': 'proj',
        'user_id': 'user'}


def test_compute_inventory():
    inventory = scheduler.compute_inventory(4, 2048, 0)
    assert set(inventory) == {'VCPU', 'MEMORY_MB'}
    assert inventory['VCPU'] == {'total': 4, 'reserved': 0, 'min_unit': 1,
                                 'max_unit': 4, 'step_size': 1,
                                 'allocation_ratio': 1.0}
