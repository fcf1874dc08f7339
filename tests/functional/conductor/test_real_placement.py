"""cyborg-lite against the real Placement and against placement_stub.

The same stack (the all-in-one: API, conductor, a fake-driver agent) runs
once with ``[placement]`` pointed at real Placement 16 (the
``openstack-placement`` package's app, in-process on SQLite, see
``tests.fixtures.real_placement``) and once at placement_stub. Each
runs the same script: the agent's start-up check, reports that add,
change and remove devices, a device disabled and enabled again, an ARQ
bound and unbound, a provider Nova still allocates from, deletions. The
Placement state after each step is recorded as an operator would read
it, checked against what it must be, and the two records must be equal.
"""

import uuid

import pytest
import requests

from cyborg_lite.allinone import hosts as allinone_hosts
from cyborg_lite.agent import service as agent_service
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import reports as reports_lib
from tests.fixtures import cyborg_api
from tests.fixtures import driver_devices
from tests.fixtures import real_placement

fpga = driver_devices.fpga

pytestmark = pytest.mark.skipif(not real_placement.available(),
                                reason='openstack-placement is not installed')

rp_uuid_of = placement_mirror.rp_uuid_of
BACKENDS = ('placement', 'placement_stub')


class Reader:
    """Reads of a Placement, as an operator would make them."""

    def __init__(self, url):
        self.url = url
        self.session = requests.Session()
        self.session.headers['OpenStack-API-Version'] = 'placement 1.26'

    def get(self, path):
        return self.session.get(self.url + path, timeout=10)

    def root(self, hostname):
        found = self.get('/resource_providers?name=%s'
                         % hostname).json()['resource_providers']
        return found[0]['uuid'] if found else None

    def tree(self, hostname):
        """``{child name: {"inventories": {rc: fields}, "traits": [...]}}``
        of the host's compute-node provider."""
        root = self.root(hostname)
        tree = {}
        for rp in self.get('/resource_providers?in_tree=%s'
                           % root).json()['resource_providers']:
            if rp['uuid'] == root:
                continue
            invs = self.get('/resource_providers/%s/inventories'
                            % rp['uuid']).json()['inventories']
            traits = self.get('/resource_providers/%s/traits'
                              % rp['uuid']).json()['traits']
            tree[rp['name']] = {'uuid': rp['uuid'], 'inventories': invs,
                                'traits': sorted(traits)}
        return tree


def _inventory(tree, name, rc):
    inv = tree[name]['inventories'][rc]
    return inv['total'], inv['reserved'], inv['max_unit']


def run_script(stack, reader, record):
    """The script; ``record(step, tree)`` after each step. Returns
    nothing: each step asserts what it must have done."""
    aio = stack.aio
    hostname = aio.hostnames[0]
    admin, service = stack.client(), stack.client(cyborg_api.SERVICE)

    # The agent found its compute node at start and reported the fake
    # driver's FPGA and GPU.
    tree = reader.tree(hostname)
    record('agent started', tree)
    assert sorted(dep['name'] for dep in admin.get(
        '/deployables').json()['deployables']) == sorted(tree)

    # A made-up host: reports add, change and remove a device.
    host = 'rp-%s.test' % uuid.uuid4().hex[:8]
    allinone_hosts.register_compute_nodes(aio.conf, [host])
    reports = aio.conductor.reports
    dev = fpga(host)
    name = dev.deployables[0].name
    assert reports.report(host, [dev.to_dict()])['added'] == 1
    tree = reader.tree(host)
    record('added', tree)
    assert _inventory(tree, name, 'FPGA') == (2, 0, 2)
    assert tree[name]['traits'] == ['CUSTOM_FPGA_TEST']
    assert tree[name]['uuid'] == rp_uuid_of(name)

    dev = fpga(host, handles=4, traits=('CUSTOM_FPGA_OTHER',))
    reports.report(host, [dev.to_dict()])
    tree = reader.tree(host)
    record('handles and traits changed', tree)
    assert _inventory(tree, name, 'FPGA') == (4, 0, 4)
    assert tree[name]['traits'] == ['CUSTOM_FPGA_OTHER']

    dev = fpga(host, handles=4, rc='CUSTOM_ACCEL_TEST',
               traits=('CUSTOM_FPGA_OTHER',))
    reports.report(host, [dev.to_dict()])
    tree = reader.tree(host)
    record('resource class changed', tree)
    assert list(tree[name]['inventories']) == ['CUSTOM_ACCEL_TEST']

    second = fpga(host, address='0000:5f:00.0', handles=1)
    reports.report(host, [dev.to_dict(), second.to_dict()])
    tree = reader.tree(host)
    record('second device', tree)
    assert sorted(tree) == sorted([name, second.deployables[0].name])

    # The agent's host: a device disabled reserves all its inventory,
    # enabled frees it.
    dep = stack.deployable('FPGA')
    device = admin.get('/devices?type=FPGA&hostname=%s'
                       % hostname).json()['devices'][0]['uuid']
    assert admin.post('/devices/%s/disable' % device).status_code == 200
    tree = reader.tree(hostname)
    record('device disabled', tree)
    total, reserved, _ = _inventory(tree, dep['name'], 'FPGA')
    assert reserved == total > 0
    assert admin.post('/devices/%s/enable' % device).status_code == 200
    tree = reader.tree(hostname)
    record('device enabled', tree)
    assert _inventory(tree, dep['name'], 'FPGA')[1] == 0

    # An ARQ bound to the agent's FPGA and unbound: Placement unchanged.
    profile = 'real-rp-%s' % uuid.uuid4().hex[:8]
    assert admin.post('/device_profiles', json=[{
        'name': profile, 'groups': [{'resources:FPGA': '1'}]}]
    ).status_code == 201
    arq = admin.post('/accelerator_requests', json={
        'device_profile_name': profile}).json()['arqs'][0]['uuid']
    resp = service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq], hostname, dep['rp_uuid'], str(uuid.uuid4())))
    assert resp.status_code == 202, resp.text
    assert admin.get('/accelerator_requests/%s' % arq).json()[
        'state'] == 'Bound'
    tree = reader.tree(hostname)
    record('bound', tree)
    resp = service.patch('/accelerator_requests',
                         json=cyborg_api.unbind_patch([arq]))
    assert resp.status_code == 202, resp.text
    assert admin.delete('/accelerator_requests?arqs=%s'
                        % arq).status_code == 204
    assert admin.delete('/device_profiles/%s' % profile).status_code == 204
    record('unbound', reader.tree(hostname))

    # Nova allocates from the second device; the report that removes it
    # keeps its provider (409 from Placement) until the allocation goes.
    consumer = str(uuid.uuid4())
    second_rp = rp_uuid_of(second.deployables[0].name)
    resp = reader.session.put(
        reader.url + '/allocations/' + consumer,
        headers={'OpenStack-API-Version': 'placement 1.28'},
        json={'allocations': {second_rp: {'resources': {'FPGA': 1}}},
              'project_id': 'p', 'user_id': 'u',
              'consumer_generation': None}, timeout=10)
    assert resp.status_code == 204, resp.text
    reports.report(host, [dev.to_dict()])
    tree = reader.tree(host)
    record('removed while allocated', tree)
    assert second.deployables[0].name in tree
    resp = reader.session.delete(reader.url + '/allocations/' + consumer,
                                 timeout=10)
    assert resp.status_code == 204
    # A conductor's first report of a host mirrors it in full, which
    # deletes the provider left behind.
    restarted = reports_lib.ReportService(aio.db, aio.conductor.mirror)
    assert restarted.report(host, [dev.to_dict()]) == {'changed': False}
    tree = reader.tree(host)
    record('allocation gone, provider deleted', tree)
    assert second.deployables[0].name not in tree

    # Everything goes.
    assert reports.report(host, [])['removed'] == 1
    tree = reader.tree(host)
    record('all removed', tree)
    assert tree == {}


@pytest.fixture(scope='module')
def backends(tmp_path_factory):
    """``{backend: (stack, reader)}``, each stack started against its
    Placement."""
    stub = allinone_hosts.EmbeddedPlacement(
        str(tmp_path_factory.mktemp('stub'))).start()
    endpoints = {'placement': real_placement.shared().endpoint,
                 'placement_stub': stub.endpoint}
    stacks = {}
    try:
        for backend in BACKENDS:
            tmp = tmp_path_factory.mktemp(backend)
            stack = cyborg_api.CyborgStack(
                tmp, overrides=allinone_hosts.placement_overrides(
                    endpoints[backend])).start()
            stacks[backend] = (stack, Reader(endpoints[backend]))
        yield stacks
    finally:
        for stack, _ in stacks.values():
            stack.stop()
        stub.stop()


def _normalised(records):
    """Records with the uuids that differ between runs left out."""
    return [(step, {name: {'inventories': entry['inventories'],
                           'traits': entry['traits']}
                    for name, entry in tree.items()})
            for step, tree in records]


def test_same_results_on_both(backends):
    records = {}
    for backend, (stack, reader) in backends.items():
        steps = records[backend] = []
        run_script(stack, reader, lambda step, tree, steps=steps:
                   steps.append((step, tree)))
    real, stub = (_normalised(records[b]) for b in BACKENDS)
    # Made-up hosts differ by name; compare shapes per step.
    assert [step for step, _ in real] == [step for step, _ in stub]
    for (step, real_tree), (_, stub_tree) in zip(real, stub, strict=True):
        assert _shape(real_tree) == _shape(stub_tree), step


def _shape(tree):
    """A tree with the host part of deployable names left out."""
    return {name.split('_', 1)[-1]: entry for name, entry in tree.items()}


@pytest.mark.parametrize('backend', BACKENDS)
def test_agent_start_up_check(backends, backend):
    stack, reader = backends[backend]
    conf = stack.aio.host_conf(stack.aio.hostnames[0])
    rp = agent_service.find_compute_node(conf, [stack.aio.hostnames[0]])
    assert rp['uuid'] == reader.root(stack.aio.hostnames[0])
    conf.set_override('resource_provider_startup_retries', 0, group='agent')
    with pytest.raises(agent_service.ComputeNodeMissing):
        agent_service.find_compute_node(
            conf, ['absent-%s.test' % uuid.uuid4().hex[:8]])
