"""The sysfs access layer against fixture trees, reads and writes."""

import os

import pytest

from cyborg_lite import model
from cyborg_lite.agent import manager
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.agent.sysfs import SysfsError
from tests.fixtures import sysfs_tree
from tests.unit.agent.conftest import tree_sysfs

T4 = '0000:af:00.0'
UUID = '0f6f8a4c-98f9-4d6c-8b5b-2f1de1c0ab12'
MIXED_UUID = '4b20d080-1b54-4048-85b3-a6a62d165c01'


def test_list_pci_addresses_is_sorted_and_complete():
    assert tree_sysfs('mixed_host').list_pci_addresses() == [
        '0000:03:00.0', '0000:18:00.0', '0000:3b:00.0', '0000:3b:00.4',
        '0000:3b:00.5', '0000:3d:00.0', '0000:5e:00.0', '0000:af:00.0',
        '0000:d8:00.0', '0000:d8:00.1']


def test_pci_device_reads_ids_and_links_of_a_pf():
    pf = tree_sysfs('a100_sriov').pci_device('0000:3b:00.0')
    assert (pf.vendor, pf.device, pf.class_code) == ('10de', '20f1',
                                                      '030200')
    assert (pf.subsystem_vendor, pf.subsystem_device) == ('10de', '145f')
    assert pf.driver == 'nvidia'
    assert pf.iommu_group == '60'
    assert pf.physfn is None and not pf.is_vf
    assert pf.virtfns == ('0000:3b:00.4', '0000:3b:00.5', '0000:3b:00.6',
                          '0000:3b:00.7')


def test_pci_device_of_a_vf_names_its_pf():
    vf = tree_sysfs('a100_sriov').pci_device('0000:3b:00.5')
    assert vf.is_vf and vf.physfn == '0000:3b:00.0'
    assert vf.virtfns == ()


def test_pci_device_of_a_missing_address_raises():
    with pytest.raises(SysfsError, match='not a PCI device'):
        tree_sysfs('a100_sriov').pci_device('0000:99:00.0')


def test_mdev_types_of_a_t4():
    types = tree_sysfs('t4_vgpu').mdev_types(T4)
    assert sorted(types) == ['nvidia-%d' % n for n in range(222, 235)]
    t = types['nvidia-222']
    assert (t.name, t.available_instances, t.device_api, t.created) == (
        'GRID T4-1B', 16, 'vfio-pci', ())
    assert 'max_instance=16' in t.description
    assert types['nvidia-229'].available_instances == 1


def test_mdev_types_list_created_mdevs():
    types = tree_sysfs('mixed_host').mdev_types(T4)
    assert types['nvidia-223'].created == (MIXED_UUID,)
    assert types['nvidia-223'].available_instances == 7
    assert types['nvidia-222'].available_instances == 0


def test_devices_without_mdev_types_have_none():
    assert tree_sysfs('a100_sriov').mdev_types('0000:3b:00.0') == {}


def test_fpga_ids_follow_the_port_to_the_vf():
    sysfs = tree_sysfs('arria10_pac')
    assert sysfs.fpga_interface_ids('0000:5e:00.0') == [
        '9926ab6d6c925a68aabca7d84c545738']
    assert sysfs.fpga_afu_ids('0000:5e:00.0') == []
    assert sysfs.fpga_afu_ids('0000:5e:00.1') == [
        'd8424dc4a4a3c413f89e433683f9040b']


def test_create_mdev_writes_the_uuid_into_create(tmp_path):
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    Sysfs(root).create_mdev(T4, 'nvidia-223', UUID)
    create = os.path.join(root, 'bus/pci/devices', T4,
                          'mdev_supported_types/nvidia-223/create')
    with open(create) as f:
        assert f.read() == UUID


def test_an_mdev_created_once_is_not_asked_for_again(tmp_path):
    """The agent leaves an mdev that exists (a bind repeated after its
    conductor was lost asks for it again) instead of writing its uuid to
    ``create``, which the kernel refuses with EEXIST."""
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    sysfs = Sysfs(root)
    agent = manager.AgentManager(None, sysfs, [])
    handle = {'uuid': UUID, 'attach_info': dict(
        model.pci_address_info(T4), asked_type='nvidia-223')}
    assert not sysfs.has_mdev(T4, 'nvidia-223', UUID)
    agent.create_mdev(None, handle)
    assert sysfs_tree.kernel_create_mdev(root, T4, 'nvidia-223') == UUID
    assert sysfs.has_mdev(T4, 'nvidia-223', UUID)
    assert not sysfs.has_mdev(T4, 'nvidia-222', UUID)
    create = os.path.join(root, 'bus/pci/devices', T4,
                          'mdev_supported_types/nvidia-223/create')
    os.remove(create)  # a second write would fail now
    agent.create_mdev(None, handle)
    assert not os.path.exists(create)


def test_create_mdev_refuses_an_unknown_type_and_a_bad_uuid(tmp_path):
    sysfs = Sysfs(sysfs_tree.copy_tree('t4_vgpu', tmp_path))
    with pytest.raises(SysfsError, match='does not offer mdev type'):
        sysfs.create_mdev(T4, 'nvidia-999', UUID)
    with pytest.raises(SysfsError, match='not a lower-case mdev uuid'):
        sysfs.create_mdev(T4, 'nvidia-223', 'not-a-uuid')


@pytest.mark.parametrize('address,mdev_type,uuid', [
    ('../../..', 'nvidia-223', UUID),
    (T4, '../../../../../etc', UUID),
    (T4, '..', UUID),
    (T4, 'nvidia-223', '../' + UUID),
])
def test_mdev_writes_refuse_path_tricks(tmp_path, address, mdev_type, uuid):
    sysfs = Sysfs(sysfs_tree.copy_tree('t4_vgpu', tmp_path))
    with pytest.raises(SysfsError, match='is not a'):
        sysfs.create_mdev(address, mdev_type, uuid)
    with pytest.raises(SysfsError, match='is not a'):
        sysfs.remove_mdev(uuid, address, mdev_type)


def test_create_mdev_reports_a_failed_write(tmp_path):
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    create = os.path.join(root, 'bus/pci/devices', T4,
                          'mdev_supported_types/nvidia-223/create')
    os.remove(create)
    os.mkdir(create)  # writing to a directory fails like a kernel error
    with pytest.raises(SysfsError, match='cannot write'):
        Sysfs(root).create_mdev(T4, 'nvidia-223', UUID)


def test_remove_mdev_writes_1_into_the_mdev_bus_entry(tmp_path):
    root = sysfs_tree.copy_tree('mixed_host', tmp_path)
    assert Sysfs(root).remove_mdev(MIXED_UUID) is True
    with open(os.path.join(root, 'bus/mdev/devices', MIXED_UUID,
                           'remove')) as f:
        assert f.read() == '1'


def test_remove_mdev_falls_back_to_the_type_devices_entry(tmp_path):
    root = sysfs_tree.copy_tree('mixed_host', tmp_path)
    os.unlink(os.path.join(root, 'bus/mdev/devices', MIXED_UUID))
    sysfs = Sysfs(root)
    assert sysfs.remove_mdev(MIXED_UUID) is False
    assert sysfs.remove_mdev(MIXED_UUID, T4, 'nvidia-223') is True
    with open(os.path.join(root, 'bus/pci/devices', T4,
                           'mdev_supported_types/nvidia-223/devices',
                           MIXED_UUID, 'remove')) as f:
        assert f.read() == '1'


def test_create_and_remove_round_trip_with_kernel_effects(tmp_path):
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    sysfs = Sysfs(root)
    sysfs.create_mdev(T4, 'nvidia-223', UUID)
    sysfs_tree.kernel_create_mdev(root, T4, 'nvidia-223')
    t = sysfs.mdev_types(T4)['nvidia-223']
    assert (t.available_instances, t.created) == (7, (UUID,))
    assert sysfs.remove_mdev(UUID) is True
    sysfs_tree.kernel_remove_mdev(root, UUID)
    t = sysfs.mdev_types(T4)['nvidia-223']
    assert (t.available_instances, t.created) == (8, ())


def test_from_conf_uses_sysfs_root(conf_factory):
    conf = conf_factory('alveo_u250')
    assert Sysfs.from_conf(conf).root == sysfs_tree.fixture_path(
        'alveo_u250')
    assert Sysfs().root == '/sys'


@pytest.mark.parametrize('bitstream', ['../outside', '/etc/shadow', '',
                                       '.hidden', 'a/b'])
def test_the_agent_programs_no_file_out_of_its_bitstream_dir(tmp_path,
                                                             bitstream):
    """Whoever asks (the conductor passes a profile's bitstream id), the
    agent never hands its program command a path out of bitstream_dir."""
    from cyborg_lite import conf as cl_conf
    from cyborg_lite.agent.drivers import base
    conf = cl_conf.build_conf(overrides={
        ('agent', 'bitstream_dir'): str(tmp_path)})
    agent = manager.AgentManager(conf, Sysfs(str(tmp_path)), [])
    with pytest.raises(base.ProgramError, match='not a bitstream name'):
        agent.program(None, {'driver_name': 'fake', 'name': 'fpga'},
                      bitstream)
