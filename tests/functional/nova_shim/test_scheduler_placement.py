"""The scheduler against the Placement stub, in-process over HTTP."""

import uuid

import pytest

placement_fixture = pytest.importorskip('placement_stub.fixture')

from nova_shim import conf as shim_conf  # noqa: E402
from nova_shim import exception  # noqa: E402
from nova_shim import scheduler  # noqa: E402

FPGA_GROUP = scheduler.RequestGroup(
    'device_profile_0', {'FPGA': 1}, required_traits={'CUSTOM_FPGA_INTEL'})


@pytest.fixture(scope='module')
def placement():
    with placement_fixture.PlacementFixture() as fixture:
        yield fixture


@pytest.fixture
def adapter(placement):
    conf = shim_conf.build_conf(overrides={
        ('placement', 'auth_type'): 'none',
        ('placement', 'endpoint_override'): placement.endpoint})
    return scheduler.get_placement_adapter(conf)


def add_deployable(adapter, parent, fpgas=1, trait='CUSTOM_FPGA_INTEL'):
    """A child provider as Cyborg's conductor creates it."""
    rp = str(uuid.uuid4())
    resp = adapter.post('/resource_providers', microversion='1.20', json={
        'uuid': rp, 'name': 'dep-' + rp, 'parent_provider_uuid': parent})
    assert resp.status_code == 200, resp.text
    resp = adapter.put('/resource_providers/%s/inventories' % rp, json={
        'resource_provider_generation': 0,
        'inventories': {'FPGA': {'total': fpgas, 'max_unit': fpgas}}})
    assert resp.status_code == 200, resp.text
    assert adapter.put('/traits/%s' % trait,
                       microversion='1.6').status_code in (201, 204)
    resp = adapter.put('/resource_providers/%s/traits' % rp,
                       microversion='1.6', json={
                           'resource_provider_generation': 1,
                           'traits': [trait]})
    assert resp.status_code == 200, resp.text
    return rp


def compute_node(adapter, traits=()):
    name = 'host-' + uuid.uuid4().hex[:8]
    return scheduler.ensure_compute_node(
        adapter, name=name, uuid=str(uuid.uuid4()), vcpus=4,
        memory_mb=4096, disk_gb=20, traits=traits)


def select(adapter, node, groups=(FPGA_GROUP,), instance=None):
    return scheduler.select_destinations(
        adapter, instance or str(uuid.uuid4()), 'proj', 'user', vcpus=1,
        memory_mb=512, disk_gb=1, groups=list(groups),
        in_tree=node['uuid'])[0]


def test_ensure_compute_node_is_idempotent(adapter):
    node = compute_node(adapter, traits=['CUSTOM_NOVA_SHIM_TEST'])
    again = scheduler.ensure_compute_node(
        adapter, name=node['name'], uuid=node['uuid'], vcpus=8,
        memory_mb=4096, disk_gb=20, traits=['CUSTOM_NOVA_SHIM_TEST'])
    assert again['uuid'] == node['uuid']
    inventories = adapter.get('/resource_providers/%s/inventories'
                              % node['uuid']).json()['inventories']
    assert inventories['VCPU']['total'] == 8
    assert set(inventories) == {'VCPU', 'MEMORY_MB', 'DISK_GB'}
    traits = adapter.get('/resource_providers/%s/traits' % node['uuid'],
                         microversion='1.6').json()['traits']
    assert traits == ['CUSTOM_NOVA_SHIM_TEST']


def test_select_claims_the_device_provider(adapter):
    node = compute_node(adapter)
    child = add_deployable(adapter, node['uuid'])
    instance = str(uuid.uuid4())
    selection = select(adapter, node, instance=instance)
    assert selection.compute_node_uuid == node['uuid']
    assert selection.compute_node_name == node['name']
    assert selection.mappings['device_profile_0'] == [child]
    allocations = adapter.get('/allocations/%s' % instance,
                              microversion='1.36').json()['allocations']
    assert allocations[child]['resources'] == {'FPGA': 1}
    assert allocations[node['uuid']]['resources'] == {
        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


def test_capacity_runs_out_and_delete_frees_it(adapter):
    node = compute_node(adapter)
    add_deployable(adapter, node['uuid'], fpgas=2)
    first = str(uuid.uuid4())
    select(adapter, node, instance=first)
    select(adapter, node)
    with pytest.raises(exception.NoValidHost):
        select(adapter, node)
    scheduler.delete_allocation(adapter, first)
    scheduler.delete_allocation(adapter, first)  # already gone: fine
    select(adapter, node)


def test_forbidden_trait_excludes_the_device(adapter):
    node = compute_node(adapter)
    add_deployable(adapter, node['uuid'], trait='CUSTOM_FPGA_XILINX')
    group = scheduler.RequestGroup('device_profile_0', {'FPGA': 1},
                                   forbidden_traits={'CUSTOM_FPGA_XILINX'})
    with pytest.raises(exception.NoValidHost):
        select(adapter, node, groups=[group])
    # The control: a device without the trait in the same tree is chosen.
    intel = add_deployable(adapter, node['uuid'], trait='CUSTOM_FPGA_INTEL')
    selection = select(adapter, node, groups=[group])
    assert selection.mappings['device_profile_0'] == [intel]


def test_flavor_only_request(adapter):
    node = compute_node(adapter)
    selection = select(adapter, node, groups=[])
    assert selection.compute_node_uuid == node['uuid']
    assert selection.mappings.get('') == [node['uuid']]


def test_every_claim_conflicting_is_no_valid_host(adapter):
    # A consumer that already has allocations makes each claim with
    # consumer_generation null a 409, so every candidate is tried.
    node = compute_node(adapter)
    instance = str(uuid.uuid4())
    select(adapter, node, groups=[], instance=instance)
    with pytest.raises(exception.NoValidHost, match='conflicted'):
        select(adapter, node, groups=[], instance=instance)


def test_host_subset_size_spreads_boots_over_the_best_nodes(adapter):
    """With ``[filter_scheduler] host_subset_size`` 2 the claims land on
    either of two nodes with room, at random; with 1, always on the first
    that Placement offers."""
    nodes = [scheduler.ensure_compute_node(
        adapter, name='subset-' + uuid.uuid4().hex[:8],
        uuid=str(uuid.uuid4()), vcpus=64, memory_mb=4096, disk_gb=64)
        for _ in range(2)]
    for node in nodes:
        add_deployable(adapter, node['uuid'], fpgas=40,
                       trait='CUSTOM_SUBSET_TEST')
    group = scheduler.RequestGroup(
        'device_profile_0', {'FPGA': 1},
        required_traits={'CUSTOM_SUBSET_TEST'})

    def chosen(subset, times):
        names = []
        for _ in range(times):
            selection, _alternates = scheduler.select_destinations(
                adapter, str(uuid.uuid4()), 'proj', 'user', vcpus=1,
                memory_mb=64, disk_gb=1, groups=[group],
                host_subset_size=subset)
            names.append(selection.compute_node_name)
        return names

    assert len(set(chosen(1, 6))) == 1
    # 30 draws between two nodes: both (a miss has odds 2 in 2**30).
    assert set(chosen(2, 30)) == {node['name'] for node in nodes}


class _LosesClaimAnswers:
    """Placement in front of which the answer to a ``PUT /allocations``
    is lost after Placement wrote it: a 502, as a proxy gives."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        body = b''.join(self.app(environ, lambda *a, **k: None))
        if (environ['REQUEST_METHOD'] == 'PUT' and
                environ['PATH_INFO'].startswith('/allocations/')):
            start_response('502 Bad Gateway',
                           [('Content-Type', 'text/plain')])
            return [b'upstream answer lost']
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [body]


def test_a_claim_whose_answer_is_lost_leaves_no_allocation(placement,
                                                           adapter):
    from placement_stub import server
    node = compute_node(adapter)
    add_deployable(adapter, node['uuid'])
    faulty = server.Server(_LosesClaimAnswers(placement.app),
                           '127.0.0.1', 0).start()
    try:
        conf = shim_conf.build_conf(overrides={
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): faulty.url})
        instance = str(uuid.uuid4())
        with pytest.raises(exception.PlacementAPIError):
            select(scheduler.get_placement_adapter(conf), node,
                   instance=instance)
    finally:
        faulty.stop()
    assert adapter.get('/allocations/%s' % instance).json()[
        'allocations'] == {}
    usages = adapter.get('/resource_providers/%s/usages' % node['uuid'])
    assert set(usages.json()['usages'].values()) == {0}
