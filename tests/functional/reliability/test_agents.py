"""An agent restarts, and its host's hardware changes.

A restart with the same devices duplicates no device, deployable or
provider. Restarted with other devices: a removed free device leaves
the DB and Placement, a removed device in use stays until its ARQ is
released, and an added device shows up.
"""

import os

import requests

from tests.fixtures import cyborg_api
from tests.functional.reliability import harness

HOST = 'compute2'
PLACEMENT_HEADERS = {'X-Auth-Token': 'admin', 'X-Roles': 'admin',
                     'X-Project-Id': 'admin', 'X-User-Id': 'admin',
                     'OpenStack-API-Version': 'placement 1.14'}
NEW_DEVICE = {'type': 'FPGA', 'address': '0000:3d:00.0', 'handles': 1,
              'traits': ['CUSTOM_REL_NEW']}


def _inventory(topology):
    """(devices, deployables, handles) rows of HOST in the DB and its
    device providers in Placement, by name."""
    db = topology.rows(
        "SELECT d.uuid AS device, p.name, p.rp_uuid, h.uuid AS handle "
        "FROM devices d LEFT JOIN deployables p ON p.device_id = d.id "
        "LEFT JOIN attach_handles h ON h.deployable_id = p.id "
        "WHERE d.hostname = :host", host=HOST)
    resp = requests.get(topology.placement_url + '/resource_providers',
                        headers=PLACEMENT_HEADERS, timeout=10)
    assert resp.status_code == 200, resp.text
    providers = sorted((p['name'], p['uuid']) for p in
                       resp.json()['resource_providers']
                       if p['name'].startswith(HOST + '_'))
    return sorted(map(str, (tuple(r.values()) for r in db))), providers


def _names(topology):
    db, providers = _inventory(topology)
    deployables = {r['name'] for r in topology.rows(
        "SELECT p.name FROM deployables p JOIN devices d "
        "ON d.id = p.device_id WHERE d.hostname = :host", host=HOST)}
    return deployables, {name for name, _ in providers}


def test_agent_restart_and_hardware_change(healthy, results):
    topology = healthy
    original = list(topology.agent_devices[HOST])
    before = _inventory(topology)
    assert len(before[1]) == 2
    checks = 0

    topology.restart_agent(HOST)
    # Two reports after the restart: nothing was added twice.
    harness.wait_for(lambda: False, 2 * harness.REPORT_INTERVAL + 1)
    assert _inventory(topology) == before
    checks += 1

    topology.ensure_profile('rel-guest', {
        'resources:FPGA': '1', 'trait:CUSTOM_GUEST': 'required'})
    client = topology.admin()
    busy = topology.deployable(HOST + '_0000:3b:00.0')
    resp = client.post('/accelerator_requests',
                       json={'device_profile_name': 'rel-guest'})
    [arq] = resp.json()['arqs']
    resp = client.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq['uuid']], HOST, busy['rp_uuid'], harness.new_instance()))
    assert resp.status_code == 202, resp.text
    try:
        # 3b (in use) and 3c (free) leave the host, 3d arrives.
        topology.restart_agent(HOST, [NEW_DEVICE])
        expected = ({HOST + '_0000:3b:00.0', HOST + '_0000:3d:00.0'},) * 2
        got = harness.wait_for(
            lambda: _names(topology) == expected and expected,
            4 * harness.REPORT_INTERVAL + 10)
        assert got, _names(topology)
        assert topology.arq_states([arq['uuid']]) == {arq['uuid']: 'Bound'}
        checks += 1
    finally:
        assert client.delete('/accelerator_requests/' + arq['uuid']
                             ).status_code == 204
    # Released: the vanished device goes from the DB and Placement.
    expected = ({HOST + '_0000:3d:00.0'},) * 2
    assert harness.wait_for(lambda: _names(topology) == expected,
                            2 * harness.REPORT_INTERVAL + 10), \
        _names(topology)
    checks += 1

    # The old hardware back: the same providers as at first.
    topology.restart_agent(HOST, original)
    assert harness.wait_for(lambda: _inventory(topology)[1] == before[1],
                            4 * harness.REPORT_INTERVAL + 10), \
        _inventory(topology)
    checks += 1
    results.update(
        fault='agent %s restarted 3 times: same devices; one in-use and '
              'one free device removed and one added; restored' % HOST,
        requests=checks, errors=0, lost=0,
        notes='no duplicate devices, deployables or providers; the '
              'in-use device stayed until its ARQ was deleted')


def _host_names(topology, host):
    """Deployable names of ``host`` in the DB and in Placement."""
    db = {r['name'] for r in topology.rows(
        "SELECT p.name FROM deployables p JOIN devices d "
        "ON d.id = p.device_id WHERE d.hostname = :host", host=host)}
    resp = requests.get(topology.placement_url + '/resource_providers',
                        headers=PLACEMENT_HEADERS, timeout=10)
    placement = {p['name'] for p in resp.json()['resource_providers']
                 if p['name'].startswith(host + '_')}
    return db, placement


def test_hot_unplug_and_plug_between_reports(healthy, results):
    """A real driver (nvidia_gpu) on the host's sysfs tree: a device
    unplugged (its ``bus/pci/devices`` link removed) leaves the DB and
    Placement on the next report, and comes back when plugged again,
    with no agent restart."""
    topology = healthy
    host = 'compute3'
    before = _host_names(topology, host)
    link = os.path.join(topology.sysfs_root(host), 'bus', 'pci',
                        'devices', '0000:3b:00.7')
    target = os.readlink(link)
    name = host + '_0000:3b:00.7'
    topology.agent_drivers[host] = 'nvidia_gpu'
    try:
        agent = topology.restart_agent(host)
        plugged = harness.wait_for(
            lambda: (lambda n: n[0] == n[1] and name in n[0] and n)(
                _host_names(topology, host)),
            4 * harness.REPORT_INTERVAL + 10)
        assert plugged, _host_names(topology, host)
        plugged = plugged[0]
        os.unlink(link)
        try:
            unplugged = (plugged - {name},) * 2
            assert harness.wait_for(
                lambda: _host_names(topology, host) == unplugged,
                3 * harness.REPORT_INTERVAL + 5), _host_names(topology, host)
        finally:
            os.symlink(target, link)
        assert harness.wait_for(
            lambda: _host_names(topology, host) == (plugged, plugged),
            3 * harness.REPORT_INTERVAL + 5), _host_names(topology, host)
        assert agent.popen.poll() is None
    finally:
        del topology.agent_drivers[host]
        topology.restart_agent(host)
    assert harness.wait_for(lambda: _host_names(topology, host) == before,
                            4 * harness.REPORT_INTERVAL + 10), \
        _host_names(topology, host)
    results.update(
        fault='GPU 0000:3b:00.7 unplugged from the sysfs tree of %s between '
              'reports, then plugged back (no agent restart)' % host,
        requests=3, errors=0, lost=0,
        notes='gone from the DB and Placement, then back, each within '
              'one report (report_interval=%d s)' % harness.REPORT_INTERVAL)
