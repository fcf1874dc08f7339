"""Nova's build paths beyond one host: reschedule, multi-create, evacuate.

Three simulated hosts with fake FPGAs (4 attach handles each) behind
one nova_shim compute service, placement_stub and cyborg-lite. Faults
are injected at the boundaries only: attach handles taken through
Cyborg's own API behind Placement's back (a bind that Cyborg refuses on
one host), a domain that libvirt refuses (a spawn that fails), Placement
allocations of another consumer (devices already in use).
"""

import time
import uuid

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim import scheduler  # noqa: E402
from tests.fixtures import cyborg_api  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import FPGA_HANDLES  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

DP = 'paths-fpga'
ADMIN = dict(HEADERS, **{'X-Roles': 'admin,member,reader'})
# An admin of another project: what it does to a server leaves the
# server's ARQs with the server's own project.
OTHER_ADMIN = {'X-Project-Id': 'p-admin', 'X-User-Id': 'u-admin',
               'X-Roles': 'admin,member,reader'}


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('paths'), hosts=3).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


@pytest.fixture(autouse=True)
def no_servers_left(chain):
    """Each test starts and ends with no servers and no allocations."""
    yield
    for server in chain.api('GET', '/servers').json()['servers']:
        chain.api('DELETE', '/servers/' + server['id'])
    chain.service.manager.wait_for_background()


def hosts_in_offer_order(chain):
    """The compute nodes in the order Placement offers them for DP."""
    query = scheduler.build_candidates_query(
        1, 256, 1, [scheduler.RequestGroup('_device_profile_0',
                                           {'FPGA': 1})])
    body = chain.service.deps.placement.get(
        '/allocation_candidates', params=query,
        microversion=scheduler.CANDIDATES_VERSION).json()
    roots = dict.fromkeys(c.root_provider_uuid
                          for c in scheduler.parse_candidates(body))
    names = {v: k for k, v in chain.service.deps.nodes.items()}
    return [names[root] for root in roots]


def fpga_rp(chain, host):
    return chain.stack.deployable(
        'FPGA', chain.stack.aio.hostnames.index(host))['rp_uuid']


class HandlesTaken:
    """Every attach handle of ``hosts`` bound through Cyborg's API to
    another instance, while Placement still offers them."""

    def __init__(self, chain, hosts, profile=DP):
        self.chain = chain
        self.hosts = hosts
        self.profile = profile
        # One instance per host: Cyborg binds an instance's ARQs at once.
        self.instances = {host: str(uuid.uuid4()) for host in hosts}

    def __enter__(self):
        for host, instance in self.instances.items():
            arqs = [self.chain.cyborg.post('/accelerator_requests', json={
                'device_profile_name': self.profile}).json()['arqs'][0][
                    'uuid']
                for _ in range(FPGA_HANDLES)]
            resp = self.chain.cyborg.patch(
                '/accelerator_requests', json=cyborg_api.bind_patch(
                    arqs, host, fpga_rp(self.chain, host), instance))
            assert resp.status_code == 202, resp.text
        return self

    def __exit__(self, *exc):
        for instance in self.instances.values():
            self.chain.cyborg.delete('/accelerator_requests',
                                     params={'instance': instance})


def allocated_roots(chain, server_id):
    """The compute nodes whose providers hold the server's allocation."""
    rps = set(chain.allocations(server_id))
    return {host for host in chain.service.deps.nodes
            if chain.service.deps.nodes[host] in rps or
            fpga_rp(chain, host) in rps}


def assert_holds_only(chain, server, host):
    """The server's ARQs are bound on ``host``, its allocation is there,
    and nothing of another attempt is left."""
    assert server['OS-EXT-SRV-ATTR:hypervisor_hostname'] == host
    assert allocated_roots(chain, server['id']) == {host}
    arqs = chain.cyborg_arqs(server['id'])
    assert [(a['state'], a['hostname']) for a in arqs] == [('Bound', host)]
    assert [a['uuid'] for a in server['accelerator_requests']] == \
        [a['uuid'] for a in arqs]
    assert len(server['hostdevs']) == 1


def test_reschedule_after_a_bind_failure(chain):
    first, second = hosts_in_offer_order(chain)[:2]
    with HandlesTaken(chain, [first]):
        server_id = chain.boot('rescheduled', DP)
        server = chain.wait(server_id, 'ACTIVE', 'ERROR')
        assert server['status'] == 'ACTIVE', server.get('fault')
        assert server['retry'] == {'num_attempts': 2,
                                   'hosts': [[first, first],
                                             [second, second]]}
        assert_holds_only(chain, server, second)


class RefusingConnection:
    """The libvirt connection, refusing the next domain definition as
    libvirt refuses a broken one (a real libvirtError)."""

    def __init__(self, conn, refusals=1):
        self._conn = conn
        self.refusals = refusals

    def defineXML(self, xml):
        if self.refusals:
            self.refusals -= 1
            return self._conn.defineXML('<domain type="test"><name>x')
        return self._conn.defineXML(xml)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_reschedule_after_a_spawn_failure(chain, monkeypatch):
    first, second = hosts_in_offer_order(chain)[:2]
    host = chain.service.deps.driver.host
    refusing = RefusingConnection(host.get_connection())
    monkeypatch.setattr(host, 'get_connection', lambda: refusing)
    server_id = chain.boot('respawned', DP)
    server = chain.wait(server_id, 'ACTIVE', 'ERROR')
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert refusing.refusals == 0
    assert server['retry']['num_attempts'] == 2
    assert server['retry']['hosts'][0] == [first, first]
    assert_holds_only(chain, server, second)


def test_max_attempts_exhausted(chain):
    chain.conf.set_override('max_attempts', 2, group='scheduler')
    hosts = hosts_in_offer_order(chain)
    try:
        with HandlesTaken(chain, hosts):
            server_id = chain.boot('unlucky', DP)
            server = chain.wait(server_id, 'ERROR')
            fault = server['fault']['message']
            assert 'Exceeded maximum number of retries' in fault
            assert '1. %s: ' % hosts[0] in fault
            assert '2. %s: ' % hosts[1] in fault
            assert hosts[2] not in fault
            assert server['retry']['num_attempts'] == 2
            assert server['OS-EXT-SRV-ATTR:host'] is None
            assert chain.allocations(server_id) == {}
            assert chain.cyborg_arqs(server_id) == []
            assert server['hostdevs'] == []
    finally:
        chain.conf.clear_override('max_attempts', group='scheduler')


class DevicesInUse:
    """Placement allocations of another consumer on FPGA providers, so
    that only ``free`` FPGAs are offered."""

    def __init__(self, chain, free):
        self.chain = chain
        self.free = free
        self.consumer = str(uuid.uuid4())

    def __enter__(self):
        allocations = {}
        free = self.free
        for host in self.chain.service.deps.nodes:
            used = FPGA_HANDLES - min(free, FPGA_HANDLES)
            free -= FPGA_HANDLES - used
            if used:
                allocations[fpga_rp(self.chain, host)] = {
                    'resources': {'FPGA': used}}
        resp = self.chain.service.deps.placement.put(
            '/allocations/' + self.consumer, microversion='1.36', json={
                'allocations': allocations, 'consumer_generation': None,
                'project_id': 'other', 'user_id': 'other'})
        assert resp.status_code == 204, resp.text
        return self

    def __exit__(self, *exc):
        self.chain.service.deps.placement.delete(
            '/allocations/' + self.consumer)


def multi_create(chain, min_count, max_count):
    resp = chain.api('POST', '/servers', json={'server': {
        'name': 'many', 'min_count': min_count, 'max_count': max_count,
        'return_reservation_id': True,
        'flavor': {'name': 'f-many', 'vcpus': 1, 'ram': 256, 'disk': 1,
                   'extra_specs': {'accel:device_profile': DP}}}})
    assert resp.status_code == 202, resp.text
    reservation = resp.json()['reservation_id']
    chain.service.manager.wait_for_background()
    return chain.api('GET', '/servers/detail', params={
        'reservation_id': reservation}).json()['servers']


def test_multi_create_below_min_count_is_no_valid_host(chain):
    with DevicesInUse(chain, free=2):
        servers = multi_create(chain, 3, 3)
        assert sorted(s['name'] for s in servers) == \
            ['many-1', 'many-2', 'many-3']
        for server in servers:
            assert server['status'] == 'ERROR'
            assert 'No valid host' in server['fault']['message']
            assert '2 of the 3' in server['fault']['message']
            assert chain.allocations(server['id']) == {}
            assert chain.cyborg_arqs(server['id']) == []


def test_multi_create_places_as_many_as_fit(chain):
    with DevicesInUse(chain, free=2):
        servers = multi_create(chain, 1, 3)
        assert [s['status'] for s in servers] == ['ACTIVE', 'ACTIVE']
        assert [s['name'] for s in servers] == ['many-1', 'many-2']
        handles = set()
        for server in servers:
            (arq,) = chain.cyborg_arqs(server['id'])
            assert arq['state'] == 'Bound'
            handles.add(str(arq['attach_handle_info']) + arq['hostname'])
        assert len(handles) == 2


def test_multi_create_bad_counts(chain):
    for counts in ({'min_count': 0}, {'max_count': 101},
                   {'min_count': 3, 'max_count': 2},
                   {'min_count': 'two'}, {'max_count': True}):
        resp = chain.api('POST', '/servers', json={'server': dict(
            counts, name='bad', flavorRef='m1.tiny')})
        assert resp.status_code == 400, (counts, resp.text)
        assert 'badRequest' in resp.json()


def service_of(chain, host):
    services = chain.api('GET', '/os-services', params={
        'host': host}, headers=ADMIN).json()['services']
    assert len(services) == 1
    return services[0]


def force_down(chain, host, down=True):
    resp = chain.api('PUT', '/os-services/' + service_of(chain, host)['id'],
                     json={'forced_down': down}, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    assert resp.json()['service']['state'] == ('down' if down else 'up')


def test_evacuate_from_a_host_marked_down(chain):
    server_id = chain.boot('evacuee', DP)
    server = chain.wait(server_id, 'ACTIVE')
    source = server['OS-EXT-SRV-ATTR:hypervisor_hostname']
    old_arq = server['accelerator_requests'][0]['uuid']
    evacuate = {'evacuate': {}}
    # The service is up: Nova refuses (400), and only an admin may try.
    resp = chain.api('POST', '/servers/%s/action' % server_id,
                     json=evacuate, headers=ADMIN)
    assert resp.status_code == 400, resp.text
    assert 'still in use' in resp.json()['badRequest']['message']
    force_down(chain, source)
    try:
        resp = chain.action(server_id, evacuate)
        assert resp.status_code == 403, resp.text
        resp = chain.api('POST', '/servers/%s/action' % server_id,
                         json={'evacuate': {'host': source}}, headers=ADMIN)
        assert resp.status_code == 400, resp.text
        resp = chain.api('POST', '/servers/%s/action' % server_id,
                         json=evacuate, headers=OTHER_ADMIN)
        assert resp.status_code == 200, resp.text
        server = chain.wait(server_id, 'ACTIVE', 'ERROR')
        assert server['status'] == 'ACTIVE', server.get('fault')
        target = server['OS-EXT-SRV-ATTR:hypervisor_hostname']
        assert target != source
        assert_holds_only(chain, server, target)
        assert server['accelerator_requests'][0]['uuid'] != old_arq
        # A new build never lands on the host that is down.
        for n in range(2):
            other = chain.wait(chain.boot('after-%d' % n, DP), 'ACTIVE')
            assert other['OS-EXT-SRV-ATTR:hypervisor_hostname'] != source
    finally:
        force_down(chain, source, down=False)


def test_evacuate_to_a_named_host(chain):
    server_id = chain.boot('moved', DP)
    server = chain.wait(server_id, 'ACTIVE')
    source = server['OS-EXT-SRV-ATTR:hypervisor_hostname']
    target = [h for h in chain.service.deps.nodes if h != source][-1]
    force_down(chain, source)
    try:
        resp = chain.api('POST', '/servers/%s/action' % server_id,
                         json={'evacuate': {'host': 'no-such-host'}},
                         headers=ADMIN)
        assert resp.status_code == 404, resp.text
        chain.action(server_id, {'os-stop': None})
        server = chain.wait(server_id, 'SHUTOFF')
        resp = chain.api('POST', '/servers/%s/action' % server_id,
                         json={'evacuate': {'host': target}}, headers=ADMIN)
        assert resp.status_code == 200, resp.text
        # A stopped instance comes back stopped, with its accelerators.
        server = chain.wait(server_id, 'SHUTOFF', 'ERROR')
        assert server['status'] == 'SHUTOFF', server.get('fault')
        assert_holds_only(chain, server, target)
    finally:
        force_down(chain, source, down=False)


def test_services_api(chain):
    services = chain.api('GET', '/os-services',
                         headers=ADMIN).json()['services']
    assert sorted(s['host'] for s in services) == \
        sorted(chain.service.deps.nodes)
    assert {(s['binary'], s['state'], s['status']) for s in services} == \
        {('nova-compute', 'up', 'enabled')}
    host = services[0]['host']
    path = '/os-services/' + services[0]['id']
    assert chain.api('PUT', path, json={'forced_down': True}
                     ).status_code == 403
    assert chain.api('GET', '/os-services').status_code == 403
    for bad in ({'forced_down': 'yes'}, {'status': 'off'}, {},
                {'disabled_reason': 'x'}, {'other': 1}):
        resp = chain.api('PUT', path, json=bad, headers=ADMIN)
        assert resp.status_code == 400, (bad, resp.text)
    assert chain.api('PUT', '/os-services/%s' % uuid.uuid4(),
                     json={'forced_down': True},
                     headers=ADMIN).status_code == 404
    resp = chain.api('PUT', path, json={'status': 'disabled',
                                        'disabled_reason': 'maintenance'},
                     headers=ADMIN)
    assert resp.json()['service']['status'] == 'disabled'
    try:
        # A disabled host is never offered.
        for n in range(3):
            server = chain.wait(chain.boot('elsewhere-%d' % n, DP), 'ACTIVE')
            assert server['OS-EXT-SRV-ATTR:hypervisor_hostname'] != host
    finally:
        resp = chain.api('PUT', '/os-services/disable', json={
            'host': host, 'binary': 'nova-compute'}, headers=ADMIN)
        assert resp.json()['service'] == {
            'host': host, 'binary': 'nova-compute', 'status': 'disabled'}
        resp = chain.api('PUT', '/os-services/enable', json={
            'host': host, 'binary': 'nova-compute'}, headers=ADMIN)
        assert resp.json()['service']['status'] == 'enabled'
    resp = chain.api('PUT', '/os-services/force-down', json={
        'host': host, 'binary': 'nova-compute', 'forced_down': False},
        headers=ADMIN)
    assert resp.json()['service'] == {'host': host, 'binary': 'nova-compute',
                                      'forced_down': False}


def test_reschedule_leaves_no_allocation_when_deleted(chain):
    """A server deleted while its build is rescheduled holds nothing."""
    first = hosts_in_offer_order(chain)[0]
    with HandlesTaken(chain, [first]):
        server_id = chain.boot('gone', DP)
        assert chain.api('DELETE', '/servers/' + server_id).status_code \
            == 204
        chain.service.manager.wait_for_background()
        assert chain.api('GET', '/servers/' + server_id).status_code == 404
        deadline = time.monotonic() + 10
        while chain.cyborg_arqs(server_id) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert chain.cyborg_arqs(server_id) == []
        assert chain.allocations(server_id) == {}


def test_cli_multi_create_rescue_and_evacuate(chain, capsys):
    from nova_shim.cmd import cli

    def nova_shim(*args):
        code = cli.main(['--url', chain.service.url + '/v2.1', '--project',
                         HEADERS['X-Project-Id']] + list(args))
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = nova_shim('boot', '--device-profile', DP,
                               '--min-count', '2', '--max-count', '2', 'cli')
    assert code == 0, err
    assert 'reservation r-' in out and ': 2 server(s)' in out
    assert out.count(' ACTIVE ') == 2 and 'cli-1' in out and 'cli-2' in out
    code, out, _ = nova_shim('rescue', 'cli-1')
    assert code == 0 and ' RESCUE ' in out
    code, out, _ = nova_shim('unrescue', 'cli-1')
    assert code == 0 and ' ACTIVE ' in out
    (server_id,) = [s['id'] for s in chain.api(
        'GET', '/servers').json()['servers'] if s['name'] == 'cli-1']
    host = chain.show(server_id)['OS-EXT-SRV-ATTR:hypervisor_hostname']
    code, _, err = nova_shim('service-list')
    assert code == 1 and 'HTTP 403' in err  # needs --admin
    code, out, _ = nova_shim('--admin', 'service-list')
    assert code == 0 and out.count(' up ') == 3
    code, _, err = nova_shim('--admin', 'evacuate', 'cli-1')
    assert code == 1 and 'still in use' in err
    code, out, _ = nova_shim('--admin', 'service-set', host, '--down')
    assert code == 0 and host in out and ' down ' in out
    try:
        code, out, err = nova_shim('--admin', 'evacuate', 'cli-1')
        assert code == 0, err
        assert 'cli-1' in out
        chain.service.manager.wait_for_background()
        code, out, _ = nova_shim('show', 'cli-1')
        assert 'ACTIVE' in out and host not in out and 'Bound' in out
    finally:
        code, out, _ = nova_shim('--admin', 'service-set', host, '--up')
        assert code == 0 and ' up ' in out
