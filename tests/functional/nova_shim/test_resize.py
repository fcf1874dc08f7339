"""Cold migration and resize of accelerated guests, end to end.

Seven simulated hosts behind one nova_shim compute service,
placement_stub and cyborg-lite: three with fake FPGAs (4 attach handles
each), two with a Tesla T4 whose vGPUs are mdevs, two with an A100 by
PCI passthrough. Faults are injected at the boundaries only: a T4 whose
driver refuses new mdevs (a bind that fails), a domain libvirt refuses
(a spawn that fails), attach handles taken through Cyborg's own API, and
Placement allocations of another consumer (no room).
"""

import uuid

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from cyborg_lite.agent import simulation  # noqa: E402
from tests.functional.nova_shim.test_build_paths import fpga_rp  # noqa
from tests.functional.nova_shim.test_build_paths import HandlesTaken  # noqa
from tests.functional.nova_shim.test_build_paths import hosts_in_offer_order  # noqa
from tests.functional.nova_shim.test_build_paths import RefusingConnection  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import ADMIN_HEADERS  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

KINDS = ['fake', 'fake', 'fake', 't4-vgpu', 't4-vgpu', 'a100', 'a100']
PROFILES = {
    'rs-fpga': {'resources:FPGA': '1'},
    'rs-vgpu': {'resources:VGPU': '1',
                'trait:CUSTOM_NVIDIA_1EB8_T4_2B': 'required'},
    'rs-gpu': {'resources:PGPU': '1',
               'trait:CUSTOM_NVIDIA_20F1': 'required'},
}
# flavor id -> (vcpus, device profile)
FLAVORS = {'rs-fpga': (1, 'rs-fpga'), 'rs-fpga-2': (2, 'rs-fpga'),
           'rs-vgpu': (1, 'rs-vgpu'), 'rs-gpu': (1, 'rs-gpu'),
           'rs-plain': (1, None)}
V2_56 = {'OpenStack-API-Version': 'compute 2.56'}


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('resize'), host_kinds=KINDS).start()
    try:
        for name, group in PROFILES.items():
            chain.create_profile(name, group)
        for flavor_id, (vcpus, profile) in FLAVORS.items():
            resp = chain.api('POST', '/flavors', headers=ADMIN_HEADERS,
                             json={'flavor': {'id': flavor_id,
                                              'name': flavor_id,
                                              'vcpus': vcpus, 'ram': 256,
                                              'disk': 1}})
            assert resp.status_code == 200, resp.text
            if profile:
                resp = chain.api(
                    'POST', '/flavors/%s/os-extra_specs' % flavor_id,
                    headers=ADMIN_HEADERS, json={'extra_specs': {
                        'accel:device_profile': profile}})
                assert resp.status_code == 200, resp.text
        yield chain
    finally:
        chain.stop()


@pytest.fixture(autouse=True)
def nothing_left(chain):
    """Each test ends with no server, ARQ, allocation or mdev left."""
    yield
    for server in chain.api('GET', '/servers').json()['servers']:
        chain.api('DELETE', '/servers/' + server['id'])
    chain.service.manager.wait_for_background()
    chain.conf.clear_override('allow_resize_to_same_host')
    assert chain.cyborg.get('/accelerator_requests').json()['arqs'] == []
    assert mdevs(chain) == {}
    for migration in chain.service.deps.db.list_migrations():
        assert chain.allocations(migration.uuid) == {}


def hosts(chain, kind):
    return [h for h, k in zip(chain.stack.aio.hostnames, KINDS, strict=True)
            if k == kind]


def mdevs(chain):
    """hostname -> number of mdevs, for hosts that have any."""
    found = {}
    for host in chain.stack.aio.hostnames:
        root = chain.stack.aio.sysfs_root(host)
        if root and simulation.mdevs(root):
            found[host] = len(simulation.mdevs(root))
    return found


def boot(chain, name, flavor):
    resp = chain.api('POST', '/servers', json={'server': {
        'name': name, 'flavorRef': flavor}})
    assert resp.status_code == 202, resp.text
    server = chain.wait(resp.json()['server']['id'], 'ACTIVE', 'ERROR')
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


def act(chain, server, body, status=202, headers=ADMIN_HEADERS):
    resp = chain.action(server['id'], body, headers=headers)
    assert resp.status_code == status, resp.text
    return resp


def fault_of(chain, server):
    """Why the server's last move failed (Nova shows a fault only in
    ERROR; the instance keeps it)."""
    return chain.service.deps.db.get(server['id']).fault


def flavor_of(chain, server):
    return chain.service.deps.db.get(server['id']).flavor


def host_of(server):
    return server['OS-EXT-SRV-ATTR:hypervisor_hostname']


def migration_of(chain, server):
    (migration, *_older) = chain.service.deps.db.list_migrations(
        server['id'])
    return migration


def roots(chain, consumer):
    """The compute nodes whose providers hold ``consumer``'s allocation."""
    rps = set(chain.allocations(consumer))
    found = set()
    for host, node_rp in chain.service.deps.nodes.items():
        tree = chain.service.deps.placement.get(
            '/resource_providers', params={'in_tree': node_rp},
            microversion='1.14').json()['resource_providers']
        if rps & {rp['uuid'] for rp in tree}:
            found.add(host)
    return found


def arq_state(chain, arq_uuid):
    """An ARQ's state; None once it is deleted."""
    resp = chain.cyborg.get('/accelerator_requests/' + arq_uuid)
    return resp.json()['state'] if resp.status_code == 200 else None


def bound(chain, server):
    """(ARQ uuid, hostname) of the server's ARQs, all of them Bound."""
    arqs = chain.cyborg_arqs(server['id'])
    assert {a['state'] for a in arqs} <= {'Bound'}, arqs
    return sorted((a['uuid'], a['hostname']) for a in arqs)


def assert_same_devices(after, before):
    """The same host devices: the same PCI addresses; an mdev of the
    same GPU is created again when its ARQ is bound again, with a new
    UUID."""
    assert [(d['type'], d['address'] if d['type'] == 'pci' else None)
            for d in after['hostdevs']] == \
        [(d['type'], d['address'] if d['type'] == 'pci' else None)
         for d in before['hostdevs']]


def assert_unmoved(chain, before, after, arqs_before):
    """``after`` is ``before`` as it was: on its host, its flavor, its
    ARQs Bound there and nothing held anywhere else."""
    assert host_of(after) == host_of(before)
    assert flavor_of(chain, after) == flavor_of(chain, before)
    assert bound(chain, after) == arqs_before
    assert_same_devices(after, before)
    assert roots(chain, after['id']) == {host_of(before)}
    migration = migration_of(chain, after)
    assert migration.status == 'error'
    assert chain.allocations(migration.uuid) == {}


@pytest.mark.parametrize('flavor,kind', [('rs-fpga', 'fake'),
                                         ('rs-vgpu', 't4-vgpu'),
                                         ('rs-gpu', 'a100')])
def test_cold_migration_then_confirm(chain, flavor, kind):
    server = boot(chain, 'cold-' + kind, flavor)
    source = host_of(server)
    (source_arq,) = bound(chain, server)
    act(chain, server, {'migrate': None})
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ACTIVE', 'ERROR')
    assert moved['status'] == 'VERIFY_RESIZE', moved.get('fault')
    dest = host_of(moved)
    assert dest != source and dest in hosts(chain, kind)
    # Until the confirm: the source's ARQ is Unbound, kept to be bound
    # again by a revert, its device held in Placement by the migration;
    # the guest runs with the destination's new ARQ.
    (dest_arq,) = bound(chain, moved)
    assert dest_arq[0] != source_arq[0] and dest_arq[1] == dest
    assert arq_state(chain, source_arq[0]) == 'Unbound'
    assert [a['uuid'] for a in moved['accelerator_requests']] == \
        [dest_arq[0]]
    assert len(moved['hostdevs']) == 1
    migration = migration_of(chain, moved)
    assert (migration.migration_type, migration.status) == \
        ('migration', 'finished')
    assert roots(chain, server['id']) == {dest}
    assert roots(chain, migration.uuid) == {source}
    if kind == 't4-vgpu':
        assert mdevs(chain) == {dest: 1}
    act(chain, moved, {'confirmResize': None}, status=204)
    confirmed = chain.show(server['id'])
    assert confirmed['status'] == 'ACTIVE'
    assert bound(chain, confirmed) == [dest_arq]
    assert roots(chain, server['id']) == {dest}
    assert chain.allocations(migration.uuid) == {}
    assert migration_of(chain, confirmed).status == 'confirmed'
    assert arq_state(chain, source_arq[0]) is None  # deleted
    if kind == 't4-vgpu':
        assert mdevs(chain) == {dest: 1}


@pytest.mark.parametrize('flavor,kind', [('rs-fpga', 'fake'),
                                         ('rs-vgpu', 't4-vgpu'),
                                         ('rs-gpu', 'a100')])
def test_cold_migration_then_revert(chain, flavor, kind):
    server = boot(chain, 'back-' + kind, flavor)
    source = host_of(server)
    arqs_before = bound(chain, server)
    act(chain, server, {'migrate': None})
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert moved['status'] == 'VERIFY_RESIZE', moved.get('fault')
    act(chain, moved, {'revertResize': None})
    back = chain.wait(server['id'], 'ACTIVE', 'ERROR')
    assert back['status'] == 'ACTIVE', back.get('fault')
    assert host_of(back) == source
    assert bound(chain, back) == arqs_before
    assert_same_devices(back, server)
    assert back['OS-EXT-STS:power_state'] == 1
    assert roots(chain, server['id']) == {source}
    migration = migration_of(chain, back)
    assert migration.status == 'reverted'
    assert chain.allocations(migration.uuid) == {}
    if kind == 't4-vgpu':
        assert mdevs(chain) == {source: 1}


def test_migration_to_a_named_host(chain):
    server = boot(chain, 'named', 'rs-fpga')
    others = [h for h in hosts(chain, 'fake') if h != host_of(server)]
    target = others[-1]
    # The host needs 2.56; before it the schema refuses it.
    resp = chain.action(server['id'], {'migrate': {'host': target}},
                        headers=ADMIN_HEADERS)
    assert resp.status_code == 400, resp.text
    resp = chain.action(server['id'], {'migrate': {'host': 'nowhere'}},
                        headers=dict(ADMIN_HEADERS, **V2_56))
    assert resp.status_code == 400 and 'nowhere' in resp.text
    resp = chain.action(server['id'],
                        {'migrate': {'host': host_of(server)}},
                        headers=dict(ADMIN_HEADERS, **V2_56))
    assert resp.status_code == 400, resp.text
    act(chain, server, {'migrate': {'host': target}},
        headers=dict(ADMIN_HEADERS, **V2_56))
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert host_of(moved) == target, moved.get('fault')
    act(chain, moved, {'confirmResize': None}, status=204)


def test_a_stopped_guest_stays_stopped(chain):
    server = boot(chain, 'stopped', 'rs-vgpu')
    act(chain, server, {'os-stop': None}, headers=HEADERS)
    server = chain.wait(server['id'], 'SHUTOFF')
    act(chain, server, {'migrate': None})
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert moved['status'] == 'VERIFY_RESIZE', moved.get('fault')
    assert moved['OS-EXT-STS:power_state'] == 4  # SHUTDOWN
    assert len(moved['hostdevs']) == 1
    act(chain, moved, {'confirmResize': None}, status=204)
    assert chain.show(server['id'])['status'] == 'SHUTOFF'
    act(chain, server, {'os-start': None}, headers=HEADERS)
    started = chain.wait(server['id'], 'ACTIVE')
    assert started['hostdevs'] == moved['hostdevs']


@pytest.mark.parametrize('old,new,kind', [
    ('rs-fpga', 'rs-vgpu', 't4-vgpu'),   # another device profile
    ('rs-vgpu', 'rs-plain', None),       # none any more
    ('rs-plain', 'rs-gpu', 'a100'),      # one where there was none
])
def test_resize_to_another_profile_then_confirm(chain, old, new, kind):
    server = boot(chain, 'resize-%s-%s' % (old, new), old)
    arqs_before = bound(chain, server)
    act(chain, server, {'resize': {'flavorRef': new}}, headers=HEADERS)
    resized = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert resized['status'] == 'VERIFY_RESIZE', resized.get('fault')
    assert flavor_of(chain, resized)['id'] == new
    assert migration_of(chain, resized).migration_type == 'resize'
    if kind:
        assert host_of(resized) in hosts(chain, kind)
        assert len(resized['hostdevs']) == 1
    else:
        assert resized['hostdevs'] == []
    act(chain, resized, {'confirmResize': None}, status=204,
        headers=HEADERS)
    confirmed = chain.show(server['id'])
    assert confirmed['status'] == 'ACTIVE'
    after = bound(chain, confirmed)
    assert len(after) == (1 if kind else 0)
    assert not set(after) & set(arqs_before)


def test_resize_to_another_profile_then_revert(chain):
    server = boot(chain, 'resize-back', 'rs-vgpu')
    arqs_before = bound(chain, server)
    act(chain, server, {'resize': {'flavorRef': 'rs-fpga'}},
        headers=HEADERS)
    resized = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert host_of(resized) in hosts(chain, 'fake'), resized.get('fault')
    act(chain, resized, {'revertResize': None}, headers=HEADERS)
    back = chain.wait(server['id'], 'ACTIVE', 'ERROR')
    assert back['status'] == 'ACTIVE', back.get('fault')
    assert flavor_of(chain, back)['id'] == 'rs-vgpu'
    assert bound(chain, back) == arqs_before
    assert_same_devices(back, server)
    assert roots(chain, server['id']) == {host_of(server)}


class HostFull:
    """Placement allocations of another consumer taking every FPGA of
    ``hosts``: no room there."""

    def __init__(self, chain, hosts):
        self.chain = chain
        self.hosts = hosts
        self.consumer = str(uuid.uuid4())

    def __enter__(self):
        placement = self.chain.service.deps.placement
        allocations = {}
        for host in self.hosts:
            rp = fpga_rp(self.chain, host)
            inventory = placement.get(
                '/resource_providers/%s/inventories' % rp).json()
            total = inventory['inventories']['FPGA']['total']
            used = sum(usage for usage in placement.get(
                '/resource_providers/%s/usages' % rp).json()[
                    'usages'].values())
            allocations[rp] = {'resources': {'FPGA': total - used}}
        resp = placement.put('/allocations/' + self.consumer,
                             microversion='1.36', json={
                                 'allocations': allocations,
                                 'consumer_generation': None,
                                 'project_id': 'other', 'user_id': 'other'})
        assert resp.status_code == 204, resp.text
        return self

    def __exit__(self, *exc):
        self.chain.service.deps.placement.delete(
            '/allocations/' + self.consumer)


def test_resize_to_the_same_host_when_allowed(chain):
    server = boot(chain, 'same-host', 'rs-fpga')
    source = host_of(server)
    others = [h for h in hosts(chain, 'fake') if h != source]
    arqs_before = bound(chain, server)
    with HostFull(chain, others):
        # Not allowed (the default): no other host has room.
        act(chain, server, {'resize': {'flavorRef': 'rs-fpga-2'}},
            headers=HEADERS)
        failed = chain.wait(server['id'], 'ACTIVE', 'ERROR')
        assert failed['status'] == 'ACTIVE'
        assert 'No valid host' in fault_of(chain, failed)
        assert_unmoved(chain, server, failed, arqs_before)
        chain.conf.set_override('allow_resize_to_same_host', True)
        act(chain, server, {'resize': {'flavorRef': 'rs-fpga-2'}},
            headers=HEADERS)
        resized = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
        assert resized['status'] == 'VERIFY_RESIZE', resized.get('fault')
        assert host_of(resized) == source
        assert flavor_of(chain, resized)['vcpus'] == 2
        # Both flavors' resources held on the one node until confirmed.
        assert roots(chain, migration_of(chain, resized).uuid) == {source}
        act(chain, resized, {'revertResize': None}, headers=HEADERS)
        back = chain.wait(server['id'], 'ACTIVE', 'ERROR')
        assert flavor_of(chain, back)['vcpus'] == 1
        assert bound(chain, back) == arqs_before


def test_no_host_fits(chain):
    first = boot(chain, 'gpu-1', 'rs-gpu')
    second = boot(chain, 'gpu-2', 'rs-gpu')  # both A100s taken now
    arqs_before = bound(chain, first)
    act(chain, first, {'migrate': None})
    failed = chain.wait(first['id'], 'ACTIVE', 'ERROR')
    assert failed['status'] == 'ACTIVE'
    assert 'No valid host' in fault_of(chain, failed)
    assert_unmoved(chain, first, failed, arqs_before)
    assert chain.show(second['id'])['status'] == 'ACTIVE'


def test_a_bind_failure_leaves_the_guest_where_it_was(chain):
    server = boot(chain, 'bind-fails', 'rs-vgpu')
    source = host_of(server)
    (other,) = [h for h in hosts(chain, 't4-vgpu') if h != source]
    arqs_before = bound(chain, server)
    sysfs = chain.stack.aio.simulated_sysfs(other)
    sysfs.fail_mdev_creation()
    try:
        request_id = act(chain, server, {'migrate': None}).headers[
            'x-openstack-request-id']
        failed = chain.wait(server['id'], 'ACTIVE', 'ERROR')
    finally:
        sysfs.repair()
    assert failed['status'] == 'ACTIVE', failed.get('fault')
    assert failed['OS-EXT-STS:power_state'] == 1
    assert '1. %s: ' % other in fault_of(chain, failed)
    assert_unmoved(chain, server, failed, arqs_before)
    assert mdevs(chain) == {source: 1}
    # The instance's action says which step failed, and why.
    resp = chain.api('GET', '/servers/%s/os-instance-actions/%s'
                     % (server['id'], request_id), headers=ADMIN_HEADERS)
    assert resp.status_code == 200, resp.text
    action = resp.json()['instanceAction']
    assert (action['action'], action['message']) == ('migrate', 'Error')
    results = {e['event']: e['result'] for e in action['events']}
    assert results == {'conductor_migrate_server': 'Success',
                       'compute_resize_instance': 'Success',
                       'compute_finish_resize': 'Error'}
    (finish,) = [e for e in action['events']
                 if e['event'] == 'compute_finish_resize']
    assert 'MaxRetriesExceeded' in finish['traceback']


def test_a_spawn_failure_leaves_the_guest_where_it_was(chain, monkeypatch):
    server = boot(chain, 'spawn-fails', 'rs-gpu')
    arqs_before = bound(chain, server)
    host = chain.service.deps.driver.host
    refusing = RefusingConnection(host.get_connection())
    monkeypatch.setattr(host, 'get_connection', lambda: refusing)
    act(chain, server, {'migrate': None})
    failed = chain.wait(server['id'], 'ACTIVE', 'ERROR')
    assert failed['status'] == 'ACTIVE', failed.get('fault')
    assert refusing.refusals == 0
    assert failed['OS-EXT-STS:power_state'] == 1
    assert_unmoved(chain, server, failed, arqs_before)


def test_a_failed_attempt_is_rescheduled_to_an_alternate(chain):
    chain.conf.set_override('max_attempts', 3, group='scheduler')
    try:
        server = boot(chain, 'rescheduled', 'rs-fpga')
        source = host_of(server)
        first, second = [h for h in hosts_in_offer_order(chain)
                         if h != source]
        with HandlesTaken(chain, [first], profile='rs-fpga'):
            act(chain, server, {'migrate': None})
            moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ACTIVE',
                               'ERROR')
        assert moved['status'] == 'VERIFY_RESIZE', moved.get('fault')
        assert host_of(moved) == second
        assert roots(chain, server['id']) == {second}
        act(chain, moved, {'confirmResize': None}, status=204)
        assert bound(chain, chain.show(server['id']))[0][1] == second
    finally:
        chain.conf.clear_override('max_attempts', group='scheduler')


def test_delete_while_waiting_for_the_confirm(chain):
    server = boot(chain, 'deleted-moved', 'rs-vgpu')
    act(chain, server, {'migrate': None})
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    assert moved['status'] == 'VERIFY_RESIZE', moved.get('fault')
    migration = migration_of(chain, moved)
    resp = chain.api('DELETE', '/servers/' + server['id'])
    assert resp.status_code == 204, resp.text
    assert chain.allocations(server['id']) == {}
    assert chain.allocations(migration.uuid) == {}
    assert chain.cyborg_arqs(server['id']) == []
    assert mdevs(chain) == {}


def test_refusals(chain):
    server = boot(chain, 'refused', 'rs-fpga')
    # Migration is for admins (Nova's default policy).
    act(chain, server, {'migrate': None}, status=403, headers=HEADERS)
    # Nothing to confirm or revert.
    act(chain, server, {'confirmResize': None}, status=409)
    act(chain, server, {'revertResize': None}, status=409)
    # Resizes that Nova refuses.
    for body in ({'resize': {'flavorRef': 'rs-fpga'}},
                 {'resize': {'flavorRef': 'no-such-flavor'}},
                 {'resize': {}}, {'resize': None},
                 {'resize': {'flavorRef': 'rs-vgpu', 'extra': 1}},
                 {'migrate': {'extra': 1}}):
        act(chain, server, body, status=400)
    # Live migration and suspend stay refused, with Nova's 400.
    for body in ({'os-migrateLive': {'host': None,
                                     'block_migration': 'auto'}},
                 {'suspend': None}):
        resp = act(chain, server, body, status=400)
        assert resp.json()['badRequest']['message'] == \
            'Feature not supported with instances that have accelerators.'
    assert chain.show(server['id'])['status'] == 'ACTIVE'
    assert chain.service.deps.db.list_migrations(server['id']) == []


@pytest.mark.parametrize('flavor', ['rs-vgpu', 'rs-fpga'])
def test_delete_during_the_move_frees_both_sides(chain, flavor):
    server = boot(chain, 'deleted-moving', flavor)
    act(chain, server, {'migrate': None})
    # At once: the move is anywhere between its claim and its spawn.
    resp = chain.api('DELETE', '/servers/' + server['id'])
    assert resp.status_code == 204, resp.text
    chain.service.manager.wait_for_background()
    assert chain.api('GET', '/servers/' + server['id']).status_code == 404
    assert chain.allocations(server['id']) == {}
    (migration,) = chain.service.deps.db.list_migrations(server['id'])
    assert chain.allocations(migration.uuid) == {}
    # The autouse fixture checks that no ARQ (the source's Unbound ones
    # included) and no mdev is left.


def test_the_migrations_list(chain):
    server = boot(chain, 'listed', 'rs-fpga')
    source = host_of(server)
    act(chain, server, {'migrate': None})
    moved = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    act(chain, moved, {'confirmResize': None}, status=204)
    act(chain, moved, {'resize': {'flavorRef': 'rs-fpga-2'}},
        headers=HEADERS)
    resized = chain.wait(server['id'], 'VERIFY_RESIZE', 'ERROR')
    act(chain, resized, {'revertResize': None}, headers=HEADERS)
    chain.wait(server['id'], 'ACTIVE', 'ERROR')

    def listed(headers, version='2.80', **params):
        return chain.api('GET', '/os-migrations', params=dict(
            params, instance_uuid=server['id']), headers=dict(
                headers, **{'OpenStack-API-Version': 'compute ' + version}))

    resp = listed(ADMIN_HEADERS)
    assert resp.status_code == 200, resp.text
    newest, oldest = resp.json()['migrations']
    assert (newest['migration_type'], newest['status']) == ('resize',
                                                            'reverted')
    assert (oldest['migration_type'], oldest['status']) == ('migration',
                                                            'confirmed')
    assert oldest['source_compute'] == source
    assert oldest['dest_compute'] == host_of(moved) != source
    assert oldest['project_id'] == 'p-demo' and oldest['user_id']
    assert listed(ADMIN_HEADERS, status='confirmed').json()[
        'migrations'] == [oldest]
    # Paging (2.59): one at a time, then after the marker.
    page = listed(ADMIN_HEADERS, limit='1').json()
    assert page['migrations'] == [newest]
    assert 'marker=' + newest['uuid'] in \
        page['migrations_links'][0]['href']
    assert listed(ADMIN_HEADERS, marker=newest['uuid']).json()[
        'migrations'] == [oldest]
    assert listed(ADMIN_HEADERS, marker='nope').status_code == 400
    assert listed(ADMIN_HEADERS, limit='-1').status_code == 400
    # Before 2.23 no type, before 2.59 no uuid.
    (old_view, _) = listed(ADMIN_HEADERS, version='2.1').json()['migrations']
    assert 'migration_type' not in old_view and 'uuid' not in old_view
    # A project's manager lists its own project's, without the hosts; a
    # member none.
    manager = dict(HEADERS, **{'X-Roles': 'manager,member,reader'})
    resp = listed(manager, project_id='p-demo')
    assert resp.status_code == 200, resp.text
    assert {m['source_compute'] for m in resp.json()['migrations']} == \
        {None}
    assert listed(manager).status_code == 403
    assert listed(HEADERS, project_id='p-demo').status_code == 403
