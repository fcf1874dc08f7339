"""The production topology as separate processes: health, status,
accelerated guests through nova_shim, and binds racing across two
API servers and two conductors."""

import concurrent.futures
import re
import subprocess
import time
import uuid

import requests

from nova_shim.virt import libvirt as virt
from tests.fixtures import cyborg_api
from tests.fixtures import processes
from tests.functional.multiprocess import topology as topo_mod

GUEST_DP = 'mp-guest'
RACE_DP = 'mp-race'
RACE_ARQS = 24


def cyborg(url, headers=None):
    return cyborg_api.Client(url + '/v2', headers or topo_mod.SERVICE_HEADERS)


def nova(topology, method, path, **kwargs):
    kwargs.setdefault('headers', dict(
        topo_mod.HEADERS, **{'OpenStack-API-Version': 'compute 2.82'}))
    kwargs.setdefault('timeout', 60)
    return requests.request(method, topology.nova_url + '/v2.1' + path,
                            **kwargs)


def ensure_profile(client, name, group):
    listed = client.get('/device_profiles').json()['device_profiles']
    if name in {p['name'] for p in listed}:
        return
    resp = client.post('/device_profiles', json=[
        {'name': name, 'groups': [group]}])
    assert resp.status_code == 201, resp.text


def wait_server(topology, server_id, *statuses, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        resp = nova(topology, 'GET', '/servers/' + server_id)
        assert resp.status_code == 200, resp.text
        server = resp.json()['server']
        if server['status'] in statuses and \
                not server['OS-EXT-STS:task_state']:
            return server
        assert server['status'] != 'ERROR', server.get('fault', server)
        assert time.monotonic() < deadline, server
        time.sleep(0.1)


def assert_bound_with_hostdevs(server):
    arqs = server['accelerator_requests']
    assert [a['state'] for a in arqs] == ['Bound']
    assert arqs[0]['instance_uuid'] == server['id']
    assert arqs[0]['hostname'] == \
        server['OS-EXT-SRV-ATTR:hypervisor_hostname']
    assert arqs[0]['hostname'] in topo_mod.HOSTS
    expected = [{'type': h.type, 'address': h.address}
                for h in map(virt.hostdev_for_arq, arqs)]
    assert server['hostdevs'] == expected
    assert server['hostdevs'][0]['type'] == 'pci'
    return arqs


def test_healthchecks_and_status(topology):
    for url in (topology.placement_url, topology.nova_url,
                topology.cyborg_url, topology.builtin_url):
        resp = requests.get(url + '/healthcheck', timeout=10)
        assert resp.status_code == 200, (url, resp.text)
    result = subprocess.run(
        processes.script('cyborg-lite-status') + [
            '--config-file', topology.tmp + '/cyborg-lite.conf',
            'upgrade', 'check'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    # The table wraps its cells: read the words.
    assert 'Schema at' in ' '.join(result.stdout.replace('|', ' ').split())


def test_every_agent_reported(topology):
    deps = cyborg(topology.cyborg_url).get('/deployables').json()
    hosts = {d['name'].split('_')[0] for d in deps['deployables']}
    assert hosts == set(topo_mod.HOSTS)


def test_guest_lifecycle_with_cli(topology):
    """boot, stop, start and delete with the nova-shim CLI."""
    ensure_profile(cyborg(topology.cyborg_url), GUEST_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_GUEST': 'required'})
    cli = processes.script('nova-shim') + [
        '--url', topology.nova_url + '/v2.1', '--project', 'p-mp',
        '--user', 'u-mp', '--timeout', '60']
    name = 'mp-cli-' + uuid.uuid4().hex[:6]
    out = topology.group.run(cli + ['boot', '--device-profile', GUEST_DP,
                                    name], timeout=90)
    server_id = re.search(r'^id\s+(\S+)', out, re.M).group(1)
    server = wait_server(topology, server_id, 'ACTIVE')
    [arq] = assert_bound_with_hostdevs(server)

    topology.group.run(cli + ['stop', name])
    server = wait_server(topology, server_id, 'SHUTOFF')
    assert [a['uuid'] for a in assert_bound_with_hostdevs(server)] == \
        [arq['uuid']]
    topology.group.run(cli + ['start', name])
    server = wait_server(topology, server_id, 'ACTIVE')
    assert server['OS-EXT-STS:power_state'] == 1
    assert_bound_with_hostdevs(server)

    topology.group.run(cli + ['delete', name])
    deadline = time.monotonic() + 30
    while nova(topology, 'GET', '/servers/' + server_id).status_code != 404:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    resp = cyborg(topology.cyborg_url).get('/accelerator_requests/'
                                           + arq['uuid'])
    assert resp.status_code == 404, resp.text


def test_concurrent_guests_over_http(topology):
    """Three guests at once; each gets its own attach handle."""
    ensure_profile(cyborg(topology.cyborg_url), GUEST_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_GUEST': 'required'})
    flavor = {'name': 'mp-accel', 'vcpus': 1, 'ram': 256, 'disk': 1,
              'extra_specs': {'accel:device_profile': GUEST_DP}}
    ids = []
    for i in range(3):
        resp = nova(topology, 'POST', '/servers', json={'server': {
            'name': 'mp-http-%d' % i, 'flavor': flavor}})
        assert resp.status_code == 202, resp.text
        ids.append(resp.json()['server']['id'])
    try:
        servers = [wait_server(topology, s, 'ACTIVE') for s in ids]
        handles = [assert_bound_with_hostdevs(s)[0] for s in servers]
        keys = {(a['hostname'], str(sorted(
            a['attach_handle_info'].items()))) for a in handles}
        assert len(keys) == 3
    finally:
        for server_id in ids:
            nova(topology, 'DELETE', '/servers/' + server_id)
        for server_id in ids:
            deadline = time.monotonic() + 30
            while nova(topology, 'GET',
                       '/servers/' + server_id).status_code != 404:
                assert time.monotonic() < deadline
                time.sleep(0.1)


def _bind(url, arq_uuid, rp_uuid):
    client = cyborg(url)
    resp = client.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq_uuid], 'compute1', rp_uuid, str(uuid.uuid4())))
    return resp.status_code


def test_binds_race_for_handles(topology):
    """24 ARQs race for the 16 handles of one deployable, from threads,
    through the gunicorn workers and the built-in server, served by both
    conductors: exactly 16 bind, and no handle is given twice."""
    admin = cyborg(topology.cyborg_url)
    ensure_profile(admin, RACE_DP, {'resources:FPGA': '1'})
    [dep] = [d for d in admin.get('/deployables').json()['deployables']
             if d['name'] == 'compute1_0000:0c:00.0']
    assert dep['num_accelerators'] == topo_mod.RACE_HANDLES
    arqs = []
    for _ in range(RACE_ARQS):
        resp = admin.post('/accelerator_requests',
                          json={'device_profile_name': RACE_DP})
        assert resp.status_code == 201, resp.text
        arqs += [a['uuid'] for a in resp.json()['arqs']]
    urls = [topology.cyborg_url, topology.builtin_url]
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(
                lambda i: _bind(urls[i % 2], arqs[i], dep['rp_uuid']),
                range(len(arqs))))
        # A bind that finds every handle taken is refused with 409.
        assert set(codes) <= {202, 409}, codes
        accepted = [u for u, code in zip(arqs, codes, strict=True)
                    if code == 202]
        deadline = time.monotonic() + 60
        while True:
            shown = [admin.get('/accelerator_requests/' + u).json()
                     for u in arqs]
            if not any(a['state'] == 'BindStarted' for a in shown):
                break
            assert time.monotonic() < deadline, [a['state'] for a in shown]
            time.sleep(0.2)
        bound = [a for a in shown if a['state'] == 'Bound']
        assert len(bound) == topo_mod.RACE_HANDLES
        assert {a['uuid'] for a in bound} <= set(accepted)
        assert all(a['state'] != 'Bound' for a in shown
                   if a['uuid'] not in accepted)
        assert len({a['attach_handle_uuid'] for a in bound}) == len(bound)
        assert len({str(sorted(a['attach_handle_info'].items()))
                    for a in bound}) == len(bound)
    finally:
        for arq_uuid in arqs:
            admin.delete('/accelerator_requests/' + arq_uuid)
    # RabbitMQ shared this race's calls out between both conductors:
    # each logged work on some of its ARQs (the fixture's conductors
    # served earlier tests too, so their logs are searched for these).
    for proc in topology.conductors:
        with open(proc.log_file) as f:
            log = f.read()
        assert any(arq_uuid in log for arq_uuid in arqs), proc.name
