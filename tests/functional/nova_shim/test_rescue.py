"""vGPU guests: rescue and unrescue keep the accelerators; a reschedule
leaves no mdev behind.

Two simulated T4 hosts (their sysfs trees, mdevs created by the kernel's
part of the simulation) behind nova_shim, placement_stub and
cyborg-lite. As Nova's libvirt driver does for guests with
accelerators: the rescue domain boots from a rescue disk and has the
same mdev; the ARQs are neither unbound nor re-created; unrescue brings
back the guest's own XML with the same mdev.
"""

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from cyborg_lite.agent import simulation  # noqa: E402
from nova_shim.virt import libvirt as virt  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa

DP = 'rescue-vgpu'


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('rescue'),
                  host_kinds=['t4-vgpu', 't4-vgpu']).start()
    chain.create_profile(DP, {'resources:VGPU': '1',
                              'trait:CUSTOM_NVIDIA_1EB8_T4_2B': 'required'})
    try:
        yield chain
    finally:
        chain.stop()


def mdevs(chain, host=None):
    """The mdevs on one host, or on all of them."""
    hosts = [host] if host else chain.stack.aio.hostnames
    return sorted(m for h in hosts
                  for m in simulation.mdevs(chain.stack.aio.sysfs_root(h)))


def disks(chain, server_id):
    return virt.parse_disks(chain.service.deps.driver.get_xml(server_id))


def test_rescue_and_unrescue_keep_the_vgpu(chain):
    server_id = chain.boot('rescued', DP)
    server = chain.wait(server_id, 'ACTIVE')
    arqs = [(a['uuid'], a['state'], a['attach_handle_uuid'])
            for a in server['accelerator_requests']]
    ((_, _, mdev),) = arqs
    assert mdevs(chain) == [mdev]
    assert server['hostdevs'] == [{'type': 'mdev', 'address': mdev}]
    assert disks(chain, server_id) == []

    resp = chain.action(server_id, {'rescue': None})
    assert resp.status_code == 200, resp.text
    assert resp.json()['adminPass']
    server = chain.wait(server_id, 'RESCUE')
    assert server['OS-EXT-STS:vm_state'] == 'rescued'
    assert server['OS-EXT-STS:power_state'] == 1
    assert server['hostdevs'] == [{'type': 'mdev', 'address': mdev}]
    assert [(a['uuid'], a['state'], a['attach_handle_uuid'])
            for a in server['accelerator_requests']] == arqs
    (rescue_disk,) = disks(chain, server_id)
    assert rescue_disk.endswith('/%s/disk.rescue' % server_id)
    assert mdevs(chain) == [mdev]
    # Rescued: no second rescue, no stop; unrescue only.
    assert chain.action(server_id, {'rescue': None}).status_code == 409
    assert chain.action(server_id, {'os-stop': None}).status_code == 409

    assert chain.action(server_id, {'unrescue': None}).status_code == 202
    server = chain.wait(server_id, 'ACTIVE')
    assert server['hostdevs'] == [{'type': 'mdev', 'address': mdev}]
    assert [(a['uuid'], a['state'], a['attach_handle_uuid'])
            for a in server['accelerator_requests']] == arqs
    assert disks(chain, server_id) == []
    assert chain.action(server_id, {'unrescue': None}).status_code == 409

    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204
    assert mdevs(chain) == []


def test_rescue_a_stopped_guest(chain):
    server_id = chain.boot('stopped-rescue', DP)
    chain.wait(server_id, 'ACTIVE')
    chain.action(server_id, {'os-stop': None})
    chain.wait(server_id, 'SHUTOFF')
    assert chain.action(server_id, {'rescue': {}}).status_code == 200
    server = chain.wait(server_id, 'RESCUE')
    assert len(server['hostdevs']) == 1
    assert chain.action(server_id, {'rescue': 'x'}).status_code == 400
    chain.action(server_id, {'unrescue': None})
    server = chain.wait(server_id, 'ACTIVE')
    assert len(server['hostdevs']) == 1
    chain.api('DELETE', '/servers/' + server_id)
    assert mdevs(chain) == []


def test_reschedule_leaves_no_mdev_behind(chain):
    """The first host's GPU refuses new vGPUs (writes to ``create`` fail
    with EIO): the bind fails there and the guest boots on the other."""
    server_id = chain.boot('probe', DP)
    first = chain.wait(server_id, 'ACTIVE')[
        'OS-EXT-SRV-ATTR:hypervisor_hostname']
    chain.api('DELETE', '/servers/' + server_id)
    (second,) = set(chain.stack.aio.hostnames) - {first}
    sysfs = chain.stack.aio.simulated_sysfs(first)
    sysfs.fail_mdev_creation()
    try:
        server_id = chain.boot('moved', DP)
        server = chain.wait(server_id, 'ACTIVE', 'ERROR')
    finally:
        sysfs.repair()
    assert server['status'] == 'ACTIVE', server.get('fault')
    assert server['retry']['hosts'] == [[first, first], [second, second]]
    ((arq),) = server['accelerator_requests']
    assert (arq['state'], arq['hostname']) == ('Bound', second)
    assert mdevs(chain, first) == []
    assert mdevs(chain, second) == [arq['attach_handle_uuid']]
    assert server['hostdevs'] == [{'type': 'mdev',
                                   'address': arq['attach_handle_uuid']}]
    assert chain.api('DELETE', '/servers/' + server_id).status_code == 204
    assert mdevs(chain) == []
