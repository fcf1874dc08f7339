"""Agent reports applied to the DB and mirrored into the placement stub.

The stack is the real all-in-one (API, conductor, fake-driver agents,
placement stub). Reports of made-up hosts go straight to the conductor's
ReportService; the hardware boundary of the real agents is their fake
driver's device list, which the tests change.
"""

import threading
import uuid

import pytest
import requests
import sqlalchemy as sa

from cyborg_lite.allinone import hosts as allinone_hosts
from cyborg_lite import model
from cyborg_lite.conductor import placement as placement_client
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import reports
from cyborg_lite.db import models
from cyborg_lite.db import reports as db_reports
from tests.fixtures import cyborg_api
from tests.fixtures import databases
from tests.fixtures import driver_devices
from tests.fixtures import placement_proxy

fpga = driver_devices.fpga

rp_uuid_of = placement_mirror.rp_uuid_of


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def stack(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp('reports')
    with databases.database_url(request.param, tmp) as url:
        with cyborg_api.CyborgStack(tmp, db_url=url) as s:
            yield s


class Placement:
    """Reads of the stub, as an operator would make them."""

    def __init__(self, url):
        self.url = url
        self.session = requests.Session()
        self.session.headers['OpenStack-API-Version'] = 'placement 1.26'

    def get(self, path):
        return self.session.get(self.url + path, timeout=10)

    def provider(self, rp_uuid):
        resp = self.get('/resource_providers/%s' % rp_uuid)
        return resp.json() if resp.status_code == 200 else None

    def inventories(self, rp_uuid):
        return self.get('/resource_providers/%s/inventories'
                        % rp_uuid).json()['inventories']

    def traits(self, rp_uuid):
        return sorted(self.get('/resource_providers/%s/traits'
                               % rp_uuid).json()['traits'])

    def children(self, hostname):
        root = self.get('/resource_providers?name=%s'
                        % hostname).json()['resource_providers'][0]
        tree = self.get('/resource_providers?in_tree=%s'
                        % root['uuid']).json()['resource_providers']
        return sorted(rp['name'] for rp in tree if rp['uuid'] != root['uuid'])


@pytest.fixture
def placement(stack):
    return Placement(stack.aio.placement_url)


@pytest.fixture
def host(stack):
    """A made-up host with its compute-node provider."""
    name = 'rhost-%s.test' % uuid.uuid4().hex[:8]
    allinone_hosts.register_compute_nodes(stack.aio.conf, [name])
    return name


def report(service, host, devices):
    return service.report(host, [d.to_dict() for d in devices])


def counted(stack, call):
    """Run ``call``; return its result and the (DB writes, Placement
    reads, Placement writes) it cost."""
    db = stack.aio.db.counter
    client = stack.aio.conductor.mirror.client
    before = (db.writes, client.calls_read, client.calls_write)
    result = call()
    after = (db.writes, client.calls_read, client.calls_write)
    return result, tuple(a - b for a, b in zip(after, before, strict=True))


def test_add_change_remove(stack, placement, host):
    service = stack.aio.conductor.reports
    dev = fpga(host)
    name = dev.deployables[0].name
    rp = rp_uuid_of(name)

    assert report(service, host, [dev])['added'] == 1
    assert placement.children(host) == [name]
    assert placement.provider(rp)['name'] == name
    inv = placement.inventories(rp)
    assert list(inv) == ['FPGA']
    assert (inv['FPGA']['total'], inv['FPGA']['max_unit'],
            inv['FPGA']['reserved']) == (2, 2, 0)
    assert placement.traits(rp) == ['CUSTOM_FPGA_TEST']

    # A trait changes.
    dev = fpga(host, traits=('CUSTOM_FPGA_TEST', 'CUSTOM_FPGA_OTHER'))
    assert report(service, host, [dev])['updated'] == 1
    assert placement.traits(rp) == ['CUSTOM_FPGA_OTHER', 'CUSTOM_FPGA_TEST']
    assert placement.inventories(rp)['FPGA']['total'] == 2

    # The handle count changes.
    dev = fpga(host, handles=4, traits=('CUSTOM_FPGA_OTHER',))
    report(service, host, [dev])
    inv = placement.inventories(rp)['FPGA']
    assert (inv['total'], inv['max_unit']) == (4, 4)
    assert placement.traits(rp) == ['CUSTOM_FPGA_OTHER']
    stored = db_reports.load_host(stack.aio.db, host)
    assert len(stored[0].deployables[0].attach_handles) == 4

    # The resource class changes: the old inventory goes.
    dev = fpga(host, handles=4, rc='CUSTOM_ACCEL_TEST',
               traits=('CUSTOM_FPGA_OTHER',))
    report(service, host, [dev])
    inv = placement.inventories(rp)
    assert list(inv) == ['CUSTOM_ACCEL_TEST']
    assert inv['CUSTOM_ACCEL_TEST']['total'] == 4
    assert placement.provider(rp)['name'] == name

    # The device goes.
    assert report(service, host, [])['removed'] == 1
    assert placement.provider(rp) is None
    assert placement.children(host) == []
    assert db_reports.load_host(stack.aio.db, host) == []


def test_unchanged_report_costs_no_writes(stack, placement, host):
    service = stack.aio.conductor.reports
    devices = [fpga(host), fpga(host, address='0000:5f:00.0')]
    report(service, host, devices)
    summary, cost = counted(stack, lambda: report(service, host, devices))
    assert summary == {'changed': False}
    assert cost == (0, 0, 0)
    # One read only: the digest.
    db = stack.aio.db.counter
    reads = db.reads
    report(service, host, devices)
    assert db.reads - reads == 1
    assert len(placement.children(host)) == 2


def _new_host(stack):
    name = 'rhost-%s.test' % uuid.uuid4().hex[:8]
    allinone_hosts.register_compute_nodes(stack.aio.conf, [name])
    return name


def test_a_hosts_first_report_is_written_in_bulk(stack, placement):
    """However many devices a new host has, its first report costs the
    same few DB statements; in Placement, two reads (the compute node,
    its tree) and three writes per provider: no read before them."""
    service = stack.aio.conductor.reports
    # The class and trait exist already (as they do after the first
    # host of a region).
    stack.aio.conductor.mirror.client.ensure_traits(['CUSTOM_FPGA_TEST'])
    costs = {}
    for count in (1, 8):
        host = _new_host(stack)
        devices = [fpga(host, address='0000:%02x:00.0' % (0x60 + n),
                        handles=3) for n in range(count)]
        summary, costs[count] = counted(
            stack, lambda h=host, d=devices: report(service, h, d))
        assert summary['added'] == count
        assert placement.children(host) == sorted(
            d.deployables[0].name for d in devices)
        for dev in devices:
            rp = rp_uuid_of(dev.deployables[0].name)
            inv = placement.inventories(rp)['FPGA']
            assert (inv['total'], inv['max_unit'], inv['reserved']) == (
                3, 3, 0)
            assert placement.traits(rp) == ['CUSTOM_FPGA_TEST']
        stored = db_reports.load_host(stack.aio.db, host)
        assert sorted(stored, key=lambda d: d.controlpath_info) == sorted(
            devices, key=lambda d: d.controlpath_info)
    # The digest, one INSERT per table, and the host's mirrored_at.
    assert costs[8][0] == costs[1][0] <= 9
    assert costs[8][1:] == (2, 3 * 8)


def test_a_first_report_fixes_the_providers_placement_has(stack, placement):
    """A host new to the database whose providers Placement holds (a
    database restored from before): each is read and fixed."""
    service = stack.aio.conductor.reports
    host = _new_host(stack)
    dev = fpga(host)
    name = dev.deployables[0].name
    client = stack.aio.conductor.mirror.client
    root = client.get_provider_by_name(host)['uuid']
    client.ensure_child_provider(rp_uuid_of(name), name, root)
    client.set_inventory(rp_uuid_of(name), 'FPGA', 9)
    client.set_traits(rp_uuid_of(name), ['CUSTOM_FPGA_OTHER'])
    assert report(service, host, [dev])['added'] == 1
    inv = placement.inventories(rp_uuid_of(name))['FPGA']
    assert (inv['total'], inv['max_unit']) == (2, 2)
    assert placement.traits(rp_uuid_of(name)) == ['CUSTOM_FPGA_TEST']
    assert placement.children(host) == [name]


def test_an_unchanged_report_is_not_decoded(stack, host):
    """With the digest the agent sends, an unchanged report is answered
    from one read, whatever its devices hold."""
    service = stack.aio.conductor.reports
    devices = [fpga(host)]
    digest = model.report_digest(devices)
    service.report(host, [d.to_dict() for d in devices], digest)
    assert service.report(host, [{'not': 'a device'}], digest) == {
        'changed': False}


def test_conductor_restart_heals_placement(stack, placement, host):
    devices = [fpga(host), fpga(host, address='0000:5f:00.0')]
    report(stack.aio.conductor.reports, host, devices)
    lost = devices[0].deployables[0].name
    client = stack.aio.conductor.mirror.client
    client.delete_provider(rp_uuid_of(lost))
    # A provider of a deployable the DB no longer has.
    root = client.get_provider_by_name(host)['uuid']
    stale = '%s_0000:99:00.0' % host
    client.ensure_child_provider(rp_uuid_of(stale), stale, root)
    assert lost not in placement.children(host)

    # A new conductor mirrors each host in full on its first report,
    # writing only the host's mirrored_at to the DB; later reports cost
    # nothing.
    restarted = reports.ReportService(stack.aio.db, stack.aio.conductor.mirror)
    summary, cost = counted(stack, lambda: report(restarted, host, devices))
    assert summary == {'changed': False}
    assert cost[0] == 1
    assert placement.children(host) == sorted(
        d.deployables[0].name for d in devices)
    assert placement.inventories(rp_uuid_of(lost))['FPGA']['total'] == 2
    _, cost = counted(stack, lambda: report(restarted, host, devices))
    assert cost == (0, 0, 0)


def test_a_host_one_conductor_mirrored_is_not_mirrored_again(
        stack, placement):
    """With two conductors, a host that one mirrored in full since the
    other started costs the other nothing; a failed Placement write
    makes whichever takes the next report mirror it in full."""
    first = stack.aio.conductor.reports
    other = reports.ReportService(stack.aio.db, stack.aio.conductor.mirror)
    host = _new_host(stack)
    devices = [fpga(host)]
    digest = model.report_digest(devices)
    body = [d.to_dict() for d in devices]
    first.report(host, body, digest)
    summary, cost = counted(stack, lambda: other.report(host, body, digest))
    assert (summary, cost) == ({'changed': False}, (0, 0, 0))

    db_reports.clear_mirrored(stack.aio.db, host)
    third = reports.ReportService(stack.aio.db, stack.aio.conductor.mirror)
    _, cost = counted(stack, lambda: third.report(host, body, digest))
    assert cost[1] > 0 and cost[0] == 1


def _fpga_deployable(stack, hostname):
    for dep in stack.client().get('/deployables').json()['deployables']:
        if dep['name'] == '%s_0000:0c:00.0' % hostname:
            return dep
    raise LookupError(hostname)


def _bound_arq(stack, prefix, hostname, rp):
    """A new profile of one FPGA and an ARQ of it bound to ``rp`` for a
    new instance: (profile name, ARQ uuid)."""
    admin, service = stack.client(), stack.client(cyborg_api.SERVICE)
    name = '%s-%s' % (prefix, uuid.uuid4().hex[:8])
    assert admin.post('/device_profiles', json=[{
        'name': name, 'groups': [{'resources:FPGA': '1'}]}]).status_code == 201
    arq = admin.post('/accelerator_requests', json={
        'device_profile_name': name}).json()['arqs'][0]['uuid']
    resp = service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq], hostname, rp, str(uuid.uuid4())))
    assert resp.status_code == 202, resp.text
    return name, arq


def _fake_driver(stack, hostname):
    agent = [a for a in stack.aio.agents
             if a.hostname == hostname and a._server is not None][0]
    return agent, agent.drivers[0]


def test_vanished_device_kept_until_its_arq_goes(stack, placement):
    hostname = stack.aio.hostnames[0]
    admin, service = stack.client(), stack.client(cyborg_api.SERVICE)
    dep = _fpga_deployable(stack, hostname)
    rp = dep['rp_uuid']
    assert placement.provider(rp) is not None
    name, arq = _bound_arq(stack, 'vanish', hostname, rp)
    assert admin.get('/accelerator_requests/%s' % arq).json()[
        'state'] == 'Bound'

    agent, driver = _fake_driver(stack, hostname)
    specs = driver.specs
    driver.specs = [s for s in specs if s['type'] != 'FPGA']
    try:
        summary = agent.report()
        assert summary['vanished'] == 1 and summary['removed'] == 0
        cpids = [d.controlpath_info for d in
                 db_reports.load_host(stack.aio.db, hostname)]
        assert len(cpids) == 2
        assert placement.provider(rp) is not None
        # Nothing more is scheduled on the card that is gone: its
        # inventory is reserved in full, and stays so when a restarted
        # conductor mirrors the host in full.
        inventory = placement.inventories(rp)['FPGA']
        assert inventory['reserved'] == inventory['total']
        restarted = reports.ReportService(stack.aio.db,
                                          stack.aio.conductor.mirror)
        report(restarted, hostname, driver.discover())
        assert placement.inventories(rp)['FPGA'] == inventory
        # Nothing more is bound to the card that is gone: the bind
        # fails (no free handle), as upstream fails a bind it cannot do.
        other = admin.post('/accelerator_requests', json={
            'device_profile_name': name}).json()['arqs'][0]['uuid']
        resp = service.patch('/accelerator_requests',
                             json=cyborg_api.bind_patch(
                                 [other], hostname, rp, str(uuid.uuid4())))
        assert resp.status_code == 409, resp.text
        assert admin.get('/accelerator_requests/%s' % other).json()[
            'state'] == 'BindFailed'
        assert service.delete('/accelerator_requests?arqs=%s'
                              % other).status_code == 204

        resp = service.delete('/accelerator_requests?arqs=%s' % arq)
        assert resp.status_code == 204, resp.text
        assert len(db_reports.load_host(stack.aio.db, hostname)) == 1
        assert placement.provider(rp) is None
        assert dep['name'] not in placement.children(hostname)
    finally:
        driver.specs = specs
        agent.report()
        admin.delete('/device_profiles/%s' % name)
    assert placement.provider(rp)['name'] == dep['name']


def test_a_vanished_device_that_comes_back_is_schedulable_again(
        stack, placement):
    hostname = stack.aio.hostnames[0]
    admin, service = stack.client(), stack.client(cyborg_api.SERVICE)
    dep = _fpga_deployable(stack, hostname)
    rp = dep['rp_uuid']
    name, arq = _bound_arq(stack, 'back', hostname, rp)
    agent, driver = _fake_driver(stack, hostname)
    specs = driver.specs
    try:
        driver.specs = [s for s in specs if s['type'] != 'FPGA']
        assert agent.report()['vanished'] == 1
        inventory = placement.inventories(rp)['FPGA']
        assert inventory['reserved'] == inventory['total']
        driver.specs = specs
        agent.report()
        assert placement.inventories(rp)['FPGA']['reserved'] == 0
        assert admin.get('/accelerator_requests/%s' % arq).json()[
            'state'] == 'Bound'
    finally:
        driver.specs = specs
        agent.report()
        service.delete('/accelerator_requests?arqs=%s' % arq)
        admin.delete('/device_profiles/%s' % name)


def test_a_purged_provider_still_allocated_goes_at_the_next_report(
        stack, placement):
    """Nova deletes an instance's ARQs before its allocation: the purge
    of a vanished device then finds its provider allocated (Placement
    keeps it, 409), and the host's next report, unchanged as it is,
    deletes it once the allocation is gone."""
    hostname = stack.aio.hostnames[0]
    admin, service = stack.client(), stack.client(cyborg_api.SERVICE)
    dep = _fpga_deployable(stack, hostname)
    rp = dep['rp_uuid']
    name = 'allocated-%s' % uuid.uuid4().hex[:8]
    assert admin.post('/device_profiles', json=[{
        'name': name, 'groups': [{'resources:FPGA': '1'}]}]).status_code == 201
    instance = str(uuid.uuid4())
    arq = admin.post('/accelerator_requests', json={
        'device_profile_name': name}).json()['arqs'][0]['uuid']
    assert service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq], hostname, rp, instance)).status_code == 202
    nova = requests.Session()
    nova.headers.update({'OpenStack-API-Version': 'placement 1.28',
                         'X-Roles': 'admin', 'X-Project-Id': 'nova',
                         'X-User-Id': 'nova'})
    allocations = placement.url + '/allocations/' + instance
    resp = nova.put(allocations, timeout=10, json={
        'allocations': {rp: {'resources': {'FPGA': 1}}},
        'project_id': 'p1', 'user_id': 'u1', 'consumer_generation': None})
    assert resp.status_code == 204, resp.text
    agent, driver = _fake_driver(stack, hostname)
    specs = driver.specs
    driver.specs = [s for s in specs if s['type'] != 'FPGA']
    try:
        assert agent.report()['vanished'] == 1
        assert service.delete('/accelerator_requests?instance='
                              + instance).status_code == 204
        assert placement.provider(rp) is not None  # still allocated
        assert nova.delete(allocations, timeout=10).status_code == 204
        assert agent.report()['changed'] is False
        assert placement.provider(rp) is None
    finally:
        driver.specs = specs
        agent.report()
        admin.delete('/device_profiles/%s' % name)
    assert placement.provider(rp)['name'] == dep['name']


def test_agent_restart_duplicates_nothing(stack, placement):
    hostname = stack.aio.hostnames[0]
    admin = stack.client()
    devices = admin.get('/devices?hostname=%s' % hostname).json()['devices']
    deployables = admin.get('/deployables').json()['deployables']
    children = placement.children(hostname)
    assert len(children) == 2
    agent, _ = _fake_driver(stack, hostname)
    agent.stop()
    stack.aio.start_agent(hostname)
    assert admin.get('/devices?hostname=%s' % hostname).json()[
        'devices'] == devices
    assert admin.get('/deployables').json()['deployables'] == deployables
    assert placement.children(hostname) == children


def test_a_disabled_device_stays_reserved_when_its_class_changes(
        stack, placement):
    """A disabled device whose resource class changes (an operator
    reconfigures it during maintenance) gets its new inventory reserved
    in full: nothing is scheduled on it until it is enabled."""
    hostname = stack.aio.hostnames[0]
    admin = stack.client(version='2.3')
    dep = _fpga_deployable(stack, hostname)
    device = [d for d in admin.get('/devices?hostname=%s' % hostname).json()[
        'devices'] if d['type'] == 'FPGA'][0]
    agent, driver = _fake_driver(stack, hostname)
    specs = driver.specs
    assert admin.post('/devices/%s/disable'
                      % device['uuid']).status_code == 200
    try:
        driver.specs = [dict(s, rc='CUSTOM_FPGA_MAINTAINED')
                        if s['type'] == 'FPGA' else s for s in specs]
        assert agent.report()['updated'] == 1
        inventories = placement.inventories(dep['rp_uuid'])
        assert list(inventories) == ['CUSTOM_FPGA_MAINTAINED']
        inv = inventories['CUSTOM_FPGA_MAINTAINED']
        assert inv['reserved'] == inv['total'] == dep['num_accelerators']
    finally:
        driver.specs = specs
        agent.report()
        assert admin.post('/devices/%s/enable'
                          % device['uuid']).status_code == 200
    assert placement.inventories(dep['rp_uuid'])['FPGA']['reserved'] == 0


def test_disable_enable_reserve_in_placement(stack, placement):
    hostname = stack.aio.hostnames[0]
    admin = stack.client(version='2.3')
    dep = _fpga_deployable(stack, hostname)
    device = [d for d in admin.get('/devices?hostname=%s' % hostname).json()[
        'devices'] if d['type'] == 'FPGA'][0]
    total = dep['num_accelerators']
    assert admin.post('/devices/%s/disable'
                      % device['uuid']).status_code in (200, 204)
    inv = placement.inventories(dep['rp_uuid'])['FPGA']
    assert inv['reserved'] == inv['total'] == total
    assert admin.post('/devices/%s/enable'
                      % device['uuid']).status_code in (200, 204)
    assert placement.inventories(dep['rp_uuid'])['FPGA']['reserved'] == 0


def _conductor(stack, placement_url):
    conf = stack.aio.conf
    adapter = placement_client.get_adapter(conf)
    adapter.endpoint_override = placement_url
    return reports.ReportService(stack.aio.db, placement_mirror.
                                 PlacementMirror(placement_client.
                                                 PlacementClient(adapter)))


def test_reports_mirrored_out_of_order_by_two_conductors_heal(
        stack, placement, host):
    """Conductor A applies a report that adds a card, then is slow to
    write Placement; conductor B applies the next report, which no longer
    has the card, and writes Placement first. A, when done, finds the
    host changed and mirrors it in full: no provider is left for a card
    the DB does not have."""
    base = fpga(host)
    card = fpga(host, address='0000:6e:00.0')
    proxy = placement_proxy.PlacementProxy(stack.aio.placement_url)
    proxy.hold(rp_uuid_of('%s_0000:6e:00.0' % host))
    with placement_proxy.serve(proxy) as slow_url:
        conductor_a = _conductor(stack, slow_url)
        conductor_b = _conductor(stack, stack.aio.placement_url)
        report(conductor_a, host, [base])
        report(conductor_b, host, [base])
        added = threading.Thread(target=report,
                                 args=(conductor_a, host, [base, card]))
        added.start()
        assert proxy.paused.wait(30)
        assert report(conductor_b, host, [base])['removed'] == 1
        proxy.go.set()
        added.join(30)
    names = [d.name for dev in db_reports.load_host(stack.aio.db, host)
             for d in dev.deployables]
    assert names == ['%s_0000:5e:00.0' % host]
    assert placement.children(host) == names


def test_a_purge_whose_placement_writes_were_lost_heals_at_the_next_report(
        stack, placement):
    """The purge of a vanished device committed but its answer was lost
    (so no provider was deleted): the host's next report, unchanged as
    it is, finds the host pending and mirrors it in full."""
    hostname = stack.aio.hostnames[0]
    dep = _fpga_deployable(stack, hostname)
    name, arq = _bound_arq(stack, 'lost', hostname, dep['rp_uuid'])
    agent, driver = _fake_driver(stack, hostname)
    specs = driver.specs
    try:
        driver.specs = [s for s in specs if s['type'] != 'FPGA']
        assert agent.report()['vanished'] == 1
        with stack.aio.db.writer() as session:  # the ARQ goes, by hand
            session.execute(sa.delete(models.ExtArq).where(
                models.ExtArq.uuid == arq))
            session.execute(sa.update(models.AttachHandle)
                            .values(in_use=False))
        assert db_reports.purge_vanished(
            databases.LosingCommitDatabase(stack.aio.db)) == []
        assert placement.provider(dep['rp_uuid']) is not None
        agent.report()
        assert placement.provider(dep['rp_uuid']) is None
    finally:
        driver.specs = specs
        agent.report()
        stack.client().delete('/device_profiles/%s' % name)
