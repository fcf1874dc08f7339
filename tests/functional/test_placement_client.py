"""cyborg_lite.conductor.placement against placement_stub's fixture and
against the real Placement (in-process, ``tests.fixtures.real_placement``).
"""

import uuid

import pytest

from cyborg_lite import conf as cyborg_conf
from cyborg_lite.conductor import placement
from tests.fixtures import real_placement


@pytest.fixture(scope='module', params=real_placement.UNDER_TEST)
def stub(request):
    with real_placement.under_test(request.param) as under_test:
        yield under_test


@pytest.fixture
def client(stub):
    conf = cyborg_conf.build_conf(overrides={
        ('placement', 'auth_type'): 'none',
        ('placement', 'endpoint_override'): stub.endpoint})
    return placement.get_client(conf)


@pytest.fixture
def root(client):
    rp_uuid = str(uuid.uuid4())
    client._call('POST', '/resource_providers',
                 {'uuid': rp_uuid, 'name': 'host-' + rp_uuid})
    return rp_uuid


def test_providers(client, root):
    assert client.get_provider(root)['uuid'] == root
    assert client.get_provider_by_name('host-' + root)['uuid'] == root
    assert client.get_provider(str(uuid.uuid4())) is None
    assert client.get_provider_by_name('nope') is None
    child = str(uuid.uuid4())
    created = client.ensure_child_provider(child, 'dev-' + child, root)
    assert created['parent_provider_uuid'] == root
    writes = client.calls_write
    client.ensure_child_provider(child, 'dev-' + child, root)
    assert client.calls_write == writes
    assert client.delete_provider(child) is True
    assert client.delete_provider(child) is False


def test_unchanged_report_makes_no_writes(client, root):
    child = str(uuid.uuid4())
    client.ensure_child_provider(child, 'fpga-' + child, root)
    client.ensure_resource_class('CUSTOM_ACCEL')
    client.set_inventory(child, 'FPGA', 2)
    client.set_inventory(child, 'CUSTOM_ACCEL', 1)
    client.set_traits(child, ['OWNER_CYBORG', 'CUSTOM_FPGA_X'])
    before = (client.calls_read, client.calls_write)
    client.ensure_child_provider(child, 'fpga-' + child, root)
    client.ensure_resource_class('CUSTOM_ACCEL')
    client.ensure_resource_class('VCPU')
    client.set_inventory(child, 'FPGA', 2)
    client.set_traits(child, ['CUSTOM_FPGA_X', 'OWNER_CYBORG'])
    assert client.calls_write == before[1]
    assert client.calls_read > before[0]


def test_inventory_reserved_and_traits(client, root, stub):
    child = str(uuid.uuid4())
    client.ensure_child_provider(child, 'gpu-' + child, root)
    client.set_inventory(child, 'PGPU', 1)
    client.set_reserved(child, 'PGPU', 1)
    invs = client._call('GET', '/resource_providers/%s/inventories'
                        % child).json()['inventories']
    assert invs['PGPU']['reserved'] == invs['PGPU']['total'] == 1
    client.set_traits(child, [])
    assert client._call('GET', '/resource_providers/%s/traits'
                        % child).json()['traits'] == []
    with pytest.raises(placement.PlacementError) as err:
        client.set_reserved(child, 'VGPU', 1)
    assert err.value.status == 404


def test_errors_and_conflict_retry(client, root):
    with pytest.raises(placement.PlacementError) as err:
        client.ensure_child_provider(str(uuid.uuid4()), 'x',
                                     str(uuid.uuid4()))
    assert err.value.status == 400
    child = str(uuid.uuid4())
    client.ensure_child_provider(child, 'c-' + child, root)
    client.set_inventory(child, 'FPGA', 1)
    real_call = client._call
    state = {'stale': True}

    def racing_call(method, url, body=None, ok=(200,)):
        if method == 'PUT' and state.pop('stale', False):
            body = dict(body, resource_provider_generation=99)
        return real_call(method, url, body, ok)
    client._call = racing_call
    client.set_inventory(child, 'FPGA', 2)
    assert 'stale' not in state
    client._call = real_call
    assert client._call('GET', '/resource_providers/%s/inventories/FPGA'
                        % child).json()['total'] == 2
