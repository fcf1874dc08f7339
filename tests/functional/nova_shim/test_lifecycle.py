"""Instances with accelerators through nova_shim's compute API, end to end.

Every operation runs against the real chain (see test_lifecycle_chain):
the states the API reports, the ARQs Cyborg holds, the Placement
allocations and the hostdevs libvirt reads back from the domain XML.
"""

import logging
import time
import uuid

import pytest
import requests

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim import exception  # noqa: E402
from nova_shim.virt import libvirt as virt  # noqa: E402
from tests.fixtures import log_lines  # noqa: E402
from tests.functional.nova_shim import faulty_libvirt  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import ADMIN_HEADERS  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

DP = 'lifecycle-fpga'
REFUSED = ('os-migrateLive', 'suspend', 'resume')


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('chain')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


@pytest.fixture
def server(chain):
    server_id = chain.boot('vm', DP)
    chain.wait(server_id, 'ACTIVE')
    yield server_id
    chain.api('DELETE', '/servers/' + server_id)


def expected_hostdevs(arqs):
    return [{'type': h.type, 'address': h.address}
            for h in map(virt.hostdev_for_arq, arqs)]


def assert_running_with_accelerators(chain, server_id, arq_uuids=None):
    server = chain.show(server_id)
    assert server['status'] == 'ACTIVE'
    assert server['OS-EXT-STS:power_state'] == 1
    arqs = server['accelerator_requests']
    assert [a['state'] for a in arqs] == ['Bound']
    assert arqs[0]['instance_uuid'] == server_id
    if arq_uuids is not None:
        assert [a['uuid'] for a in arqs] == arq_uuids
    assert server['hostdevs'] == expected_hostdevs(arqs)
    assert server['hostdevs'][0]['type'] == 'pci'
    return server


def test_boot_binds_and_spawns(chain, server):
    shown = assert_running_with_accelerators(chain, server)
    assert shown['OS-EXT-STS:vm_state'] == 'active'
    assert shown['OS-EXT-SRV-ATTR:hypervisor_hostname'] == \
        chain.stack.aio.hostnames[0]
    device_rp = shown['accelerator_requests'][0]['device_rp_uuid']
    allocations = chain.allocations(server)
    assert allocations[device_rp]['resources'] == {'FPGA': 1}
    node = chain.service.deps.nodes[chain.stack.aio.hostnames[0]]
    assert allocations[node]['resources'] == {
        'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}
    listed = chain.api('GET', '/servers').json()['servers']
    assert server in [s['id'] for s in listed]


def test_stop_and_start_refetch_the_arqs(chain, server):
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    assert chain.action(server, {'os-stop': None}).status_code == 202
    stopped = chain.show(server)
    assert stopped['status'] == 'SHUTOFF'
    assert stopped['OS-EXT-STS:power_state'] == 4
    assert [a['state'] for a in stopped['accelerator_requests']] == ['Bound']
    assert chain.action(server, {'os-start': None}).status_code == 202
    assert_running_with_accelerators(chain, server, arqs)


def _domain_id(chain, server):
    """The libvirt domain's run id: a new one each time it starts."""
    return chain.service.deps.driver.host.get_domain(server).ID()


@pytest.mark.parametrize('reboot_type', ['SOFT', 'HARD'])
def test_reboot_keeps_the_accelerators(chain, server, reboot_type):
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    before = _domain_id(chain, server)
    resp = chain.action(server, {'reboot': {'type': reboot_type}})
    assert resp.status_code == 202, resp.text
    assert_running_with_accelerators(chain, server, arqs)
    # A hard reboot starts the guest again; a soft one asks the guest
    # OS, whose domain keeps running (no fall back to a hard one).
    if reboot_type == 'HARD':
        assert _domain_id(chain, server) != before
    else:
        assert _domain_id(chain, server) == before


def test_pause_and_unpause(chain, server):
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    assert chain.action(server, {'pause': None}).status_code == 202
    paused = chain.show(server)
    assert (paused['status'], paused['OS-EXT-STS:power_state']) == (
        'PAUSED', 3)
    assert paused['hostdevs'] == expected_hostdevs(
        paused['accelerator_requests'])
    # Nova stops only ACTIVE and ERROR instances.
    refused = chain.action(server, {'os-stop': None})
    assert refused.status_code == 409, refused.text
    assert 'paused' in refused.json()['conflictingRequest']['message']
    assert chain.action(server, {'unpause': None}).status_code == 202
    assert_running_with_accelerators(chain, server, arqs)


def test_rebuild_keeps_the_arqs(chain, server):
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    before = _domain_id(chain, server)
    resp = chain.action(server, {'rebuild': {'imageRef': 'any'}})
    assert resp.status_code == 202, resp.text
    assert resp.json()['server']['status'] == 'ACTIVE'
    assert_running_with_accelerators(chain, server, arqs)
    assert _domain_id(chain, server) != before     # a new guest


def test_shelve_offload_and_unshelve(chain, server):
    old = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    assert chain.action(server, {'shelve': None}).status_code == 202
    shelved = chain.show(server)
    assert shelved['status'] == 'SHELVED_OFFLOADED'
    assert shelved['OS-EXT-SRV-ATTR:host'] is None
    assert shelved['accelerator_requests'] == []
    assert shelved['hostdevs'] == []
    assert chain.cyborg_arqs(server) == []
    assert chain.allocations(server) == {}
    assert chain.action(server, {'unshelve': None}).status_code == 202
    chain.wait(server, 'ACTIVE')
    shown = assert_running_with_accelerators(chain, server)
    assert [a['uuid'] for a in shown['accelerator_requests']] != old
    assert chain.allocations(server)


def test_a_failed_unshelve_leaves_the_instance_offloaded(chain, server):
    """No host has room (the only compute service is disabled): the
    instance is SHELVED_OFFLOADED again, holding nothing, as Nova leaves
    it, and unshelves once there is room."""
    assert chain.action(server, {'shelve': None}).status_code == 202
    chain.wait(server, 'SHELVED_OFFLOADED')
    admin = dict(HEADERS, **{'X-Roles': 'admin,member,reader'})
    host = chain.api('GET', '/os-services', headers=admin).json()[
        'services'][0]['host']
    service = {'host': host, 'binary': 'nova-compute'}
    assert chain.api('PUT', '/os-services/disable', json=service,
                     headers=admin).status_code == 200
    try:
        assert chain.action(server, {'unshelve': None}).status_code == 202
        chain.service.manager.wait_for_background()
        failed = chain.wait(server, 'SHELVED_OFFLOADED')
        assert failed['OS-EXT-SRV-ATTR:host'] is None
        assert chain.cyborg_arqs(server) == []
        assert chain.allocations(server) == {}
    finally:
        assert chain.api('PUT', '/os-services/enable', json=service,
                         headers=admin).status_code == 200
    assert chain.action(server, {'unshelve': None}).status_code == 202
    chain.wait(server, 'ACTIVE')
    assert_running_with_accelerators(chain, server)


def test_a_failed_rebuild_leaves_the_instance_in_error(chain, server,
                                                      monkeypatch):
    """The hypervisor refuses the rebuilt guest: no guest runs, and the
    instance says so (ERROR with its fault), instead of ACTIVE."""
    faulty_libvirt.install(monkeypatch, chain).fail(
        'create', 'no room for the guest')
    resp = chain.action(server, {'rebuild': {'imageRef': 'any'}})
    assert resp.status_code == 500, resp.text
    assert 'no room for the guest' in resp.text
    failed = chain.show(server)
    assert failed['status'] == 'ERROR'
    assert 'no room for the guest' in failed['fault']['message']
    assert failed['OS-EXT-STS:task_state'] is None


def test_rebuild_of_a_stopped_instance_leaves_it_stopped(chain, server):
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    assert chain.action(server, {'os-stop': None}).status_code == 202
    chain.wait(server, 'SHUTOFF')
    resp = chain.action(server, {'rebuild': {'imageRef': 'any'}})
    assert resp.status_code == 202, resp.text
    rebuilt = chain.wait(server, 'SHUTOFF')
    assert [a['uuid'] for a in rebuilt['accelerator_requests']] == arqs
    assert chain.action(server, {'os-start': None}).status_code == 202
    assert_running_with_accelerators(chain, server, arqs)


def test_a_failed_shelve_offload_can_be_tried_again(chain, server,
                                                   monkeypatch):
    _shelve_on_its_host(chain, server)
    libvirt_ = faulty_libvirt.install(monkeypatch, chain)
    libvirt_.fail('undefineFlags', 'the domain is busy')
    resp = chain.action(server, {'shelveOffload': None},
                        headers=ADMIN_HEADERS)
    assert resp.status_code == 500, resp.text
    assert 'the domain is busy' in resp.text
    shelved = chain.show(server)
    assert (shelved['status'], shelved['OS-EXT-STS:task_state']) == (
        'SHELVED', None)
    libvirt_.heal()
    assert chain.action(server, {'shelveOffload': None},
                        headers=ADMIN_HEADERS).status_code == 202
    assert chain.show(server)['status'] == 'SHELVED_OFFLOADED'
    assert chain.cyborg_arqs(server) == []
    assert chain.allocations(server) == {}


def _shelve_on_its_host(chain, server):
    """Shelve without the offload (``shelved_offload_time = -1``)."""
    chain.conf.set_override('shelved_offload_time', -1, group='compute')
    try:
        assert chain.action(server, {'shelve': None}).status_code == 202
    finally:
        chain.conf.clear_override('shelved_offload_time', group='compute')


def test_shelve_then_shelve_offload(chain, server):
    _shelve_on_its_host(chain, server)
    shelved = chain.show(server)
    assert shelved['status'] == 'SHELVED'
    assert [a['state'] for a in shelved['accelerator_requests']] == ['Bound']
    resp = chain.action(server, {'shelveOffload': None},
                        headers=ADMIN_HEADERS)
    assert resp.status_code == 202, resp.text
    offloaded = chain.show(server)
    assert offloaded['status'] == 'SHELVED_OFFLOADED'
    assert chain.cyborg_arqs(server) == []
    assert chain.allocations(server) == {}


@pytest.mark.parametrize('action', REFUSED)
def test_refused_operations_change_nothing(chain, server, action):
    before = chain.show(server)
    # A live migration is a manager's or an admin's, by Nova's policy.
    resp = chain.action(server, {action: None}, headers=ADMIN_HEADERS)
    # As Nova 34 (ForbiddenWithAccelerators is a NotSupported): 400.
    assert resp.status_code == 400, resp.text
    assert resp.json() == {'badRequest': {
        'code': 400, 'message': 'Feature not supported with instances '
                                'that have accelerators.'}}
    assert chain.show(server) == before


def test_an_action_in_the_wrong_state_conflicts(chain, server):
    assert chain.action(server, {'unpause': None}).status_code == 409
    assert chain.action(server, {'os-start': None}).status_code == 409
    resp = chain.action(server, {'reboot': {'type': 'WARM'}})
    assert resp.status_code == 400
    assert chain.show(server)['status'] == 'ACTIVE'


def test_delete_cleans_up_everywhere(chain, caplog):
    server_id = chain.boot('doomed', DP)
    chain.wait(server_id, 'ACTIVE')
    driver = chain.service.deps.driver
    assert server_id in driver.host.list_instance_uuids()
    caplog.set_level(logging.INFO, logger='nova_shim')
    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204
    # DELETE ?instance= removed the bound ARQs; no DELETE ?arqs= follows
    # for ARQs that are gone (Cyborg's 404, logged).
    assert not [r for r in caplog.records
                if r.getMessage().startswith('Deleting ARQs')]
    assert chain.api('GET', '/servers/' + server_id).status_code == 404
    assert chain.cyborg_arqs(server_id) == []
    assert chain.allocations(server_id) == {}
    assert server_id not in driver.host.list_instance_uuids()


def test_server_without_accelerators(chain):
    server_id = chain.boot('plain', None)
    server = chain.wait(server_id, 'ACTIVE')
    assert server['accelerator_requests'] == []
    assert server['hostdevs'] == []
    resp = chain.action(server_id, {'suspend': None})
    assert resp.status_code == 400
    assert 'not supported by nova_shim' in resp.json()['badRequest'][
        'message']
    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204


def test_calls_on_servers_need_a_project(chain, server):
    """A caller that names itself (roles) but no project is a 401 up
    front on servers (a create was accepted and failed at Placement, a
    show listed no ARQs)."""
    url = chain.service.url + '/v2.1'
    for method, path, body in (
            ('POST', '/servers', {'server': {'name': 'x', 'flavor': {
                'vcpus': 1, 'ram': 512, 'disk': 1, 'extra_specs': {}}}}),
            ('GET', '/servers/' + server, None),
            ('GET', '/servers/detail', None),
            ('POST', '/servers/%s/action' % server, {'os-stop': None}),
            ('DELETE', '/servers/' + server, None)):
        resp = requests.request(method, url + path, json=body, timeout=30,
                                headers={'X-Roles': 'member,reader'})
        assert resp.status_code == 401, (method, path, resp.text)
        assert 'names no project' in resp.json()['unauthorized']['message']
    assert chain.show(server)['status'] == 'ACTIVE'


def test_noauth2_serves_a_caller_that_names_nobody_as_the_admin(chain,
                                                               server):
    """noauth2, as the placement stub's and keystoneauth's ``none``
    plugin: no identity and no token (or the plugin's ``notused``) is the
    admin, in project ``admin``; a ``user:project`` token is that user
    in that project, an admin only when the user is ``admin``."""
    url = chain.service.url + '/v2.1'
    for headers in ({}, {'X-Auth-Token': 'notused'},
                    {'X-Auth-Token': 'admin:other'}):
        resp = requests.get(url + '/servers/' + server, headers=headers,
                            timeout=30)
        assert resp.status_code == 200, (headers, resp.text)
        resp = requests.get(url + '/servers?all_tenants=1', headers=headers,
                            timeout=30)
        assert server in [s['id'] for s in resp.json()['servers']]
    resp = requests.get(url + '/servers/' + server, timeout=30,
                        headers={'X-Auth-Token': 'u-demo:p-demo'})
    assert resp.status_code == 200, resp.text
    for token in ('mallory:p-other', 'mallory'):
        resp = requests.get(url + '/servers/' + server, timeout=30,
                            headers={'X-Auth-Token': token})
        assert resp.status_code == 404, resp.text
        resp = requests.get(url + '/servers?all_tenants=1', timeout=30,
                            headers={'X-Auth-Token': token})
        assert resp.status_code == 403, resp.text


def test_a_failed_rebuild_can_be_rebooted_and_stopped(chain, server,
                                                      monkeypatch):
    """The failed rebuild leaves no guest; a hard reboot defines it
    again with its ARQs (they stayed bound for it), and a stop of an
    instance without a guest is no 404."""
    libvirt_ = faulty_libvirt.install(monkeypatch, chain)
    libvirt_.fail('create', 'no room for the guest')
    assert chain.action(server, {'rebuild': {'imageRef': 'any'}}
                        ).status_code == 500
    libvirt_.heal()
    failed = chain.show(server)
    assert (failed['status'], failed['OS-EXT-STS:power_state']) == (
        'ERROR', 0)
    resp = chain.action(server, {'os-stop': None})
    assert resp.status_code == 202, resp.text
    assert chain.wait(server, 'SHUTOFF')['OS-EXT-STS:power_state'] == 0
    resp = chain.action(server, {'reboot': {'type': 'HARD'}})
    assert resp.status_code == 202, resp.text
    chain.wait(server, 'ACTIVE')
    assert_running_with_accelerators(chain, server)


def test_a_failed_hard_reboot_leaves_the_instance_in_error(chain, server,
                                                          monkeypatch):
    """The guest was powered off and does not start again: ERROR with
    its power state, as Nova's reboot leaves it, not ACTIVE with a
    guest that is off; another hard reboot brings it back."""
    libvirt_ = faulty_libvirt.install(monkeypatch, chain)
    libvirt_.fail('create', 'the guest does not start')
    resp = chain.action(server, {'reboot': {'type': 'HARD'}})
    assert resp.status_code == 500, resp.text
    failed = chain.show(server)
    assert (failed['status'], failed['OS-EXT-STS:task_state'],
            failed['OS-EXT-STS:power_state']) == ('ERROR', None, 4)
    assert 'the guest does not start' in failed['fault']['message']
    libvirt_.heal()
    assert chain.action(server, {'reboot': {'type': 'HARD'}}).status_code \
        == 202
    chain.wait(server, 'ACTIVE')
    assert_running_with_accelerators(chain, server)


def test_a_failed_unshelve_of_a_shelved_instance_keeps_it(chain, server,
                                                         monkeypatch):
    """Shelved on its host, it does not power on: still SHELVED with its
    host, ARQs and allocation, as Nova leaves it, and unshelved later."""
    arqs = [a['uuid'] for a in chain.show(server)['accelerator_requests']]
    _shelve_on_its_host(chain, server)
    allocations = chain.allocations(server)
    libvirt_ = faulty_libvirt.install(monkeypatch, chain)
    libvirt_.fail('create', 'the guest does not start')
    assert chain.action(server, {'unshelve': None}).status_code == 202
    deadline = time.monotonic() + 10
    while (chain.show(server)['OS-EXT-STS:task_state'] is not None and
           time.monotonic() < deadline):
        time.sleep(0.05)
    shelved = chain.show(server)
    assert shelved['status'] == 'SHELVED'
    assert shelved['OS-EXT-SRV-ATTR:host'] is not None
    assert [a['uuid'] for a in shelved['accelerator_requests']] == arqs
    assert chain.allocations(server) == allocations
    libvirt_.heal()
    assert chain.action(server, {'unshelve': None}).status_code == 202
    chain.wait(server, 'ACTIVE')
    assert_running_with_accelerators(chain, server, arqs)


def test_an_offload_whose_arqs_cyborg_keeps_keeps_its_allocation(
        chain, server, monkeypatch):
    """Cyborg does not delete the ARQs: the offload fails, SHELVED with
    its ARQs and its allocation (Placement must not count the devices
    that Cyborg holds as free); offloaded once Cyborg answers again."""
    from nova_shim.accelerator import cyborg
    _shelve_on_its_host(chain, server)
    allocations = chain.allocations(server)

    def refuse(self, instance_uuid):
        raise exception.AcceleratorRequestOpFailed(op='delete',
                                                   msg='Cyborg is away')
    real = cyborg._CyborgClient.delete_arqs_for_instance
    monkeypatch.setattr(cyborg._CyborgClient, 'delete_arqs_for_instance',
                        refuse)
    resp = chain.action(server, {'shelveOffload': None},
                        headers=ADMIN_HEADERS)
    assert resp.status_code == 500, resp.text
    shelved = chain.show(server)
    assert (shelved['status'], shelved['OS-EXT-STS:task_state']) == (
        'SHELVED', None)
    assert [a['state'] for a in chain.cyborg_arqs(server)] == ['Bound']
    assert chain.allocations(server) == allocations
    monkeypatch.setattr(cyborg._CyborgClient, 'delete_arqs_for_instance',
                        real)
    assert chain.action(server, {'shelveOffload': None},
                        headers=ADMIN_HEADERS).status_code == 202
    assert chain.show(server)['status'] == 'SHELVED_OFFLOADED'
    assert chain.cyborg_arqs(server) == []
    assert chain.allocations(server) == {}


def test_a_soft_reboot_needs_no_cyborg(chain, server, monkeypatch):
    """The guest keeps its XML: a soft reboot reads no ARQs, and works
    while Cyborg is away."""
    from nova_shim.accelerator import cyborg

    def away(self, instance_uuid, *args, **kwargs):
        raise exception.AcceleratorRequestOpFailed(op='get',
                                                   msg='Cyborg is away')
    monkeypatch.setattr(cyborg._CyborgClient, 'get_arqs_for_instance', away)
    before = _domain_id(chain, server)
    resp = chain.action(server, {'reboot': {'type': 'SOFT'}})
    assert resp.status_code == 202, resp.text
    assert chain.show(server)['status'] == 'ACTIVE'
    assert _domain_id(chain, server) == before


def test_a_boot_is_traced_by_its_request_id(chain):
    """nova_shim's API gives each request an id (``X-OpenStack-Request-ID``
    and Nova's ``X-Compute-Request-Id``); the build thread keeps the
    request's context, so its lines name the request, and the Cyborg
    calls it makes send that id, which cyborg-lite's lines name as their
    global request id, as Nova's and Cyborg's logs do."""
    global_id = 'req-%s' % uuid.uuid4()
    with log_lines.captured('nova_shim.compute',
                            'cyborg_lite.conductor') as lines:
        resp = chain.api('POST', '/servers', headers=dict(
            HEADERS, **{'X-OpenStack-Request-ID': global_id}),
            json={'server': {'name': 'vm', 'flavor': {
                'name': 'f-logs', 'vcpus': 1, 'ram': 256, 'disk': 1,
                'extra_specs': {'accel:device_profile': DP}}}})
        assert resp.status_code == 202, resp.text
        server_id = resp.json()['server']['id']
        chain.wait(server_id, 'ACTIVE')
    request_id = resp.headers['X-OpenStack-Request-ID']
    assert resp.headers['X-Compute-Request-Id'] == request_id
    [built] = [line for line in lines
               if 'instance %s: built' % server_id in line]
    assert log_lines.context_part(global_id, request_id, 'u-demo',
                                  'p-demo') in built, built
    # The bind that the build asked cyborg-lite for: Nova's request id
    # is its global request id.
    bound = [line for line in lines
             if 'cyborg_lite.conductor' in line and '-> Bound' in line]
    assert bound, lines
    assert all('[%s req-' % request_id in line for line in bound), bound
    chain.api('DELETE', '/servers/' + server_id)
