"""The NVIDIA driver against the GPU fixture trees."""

import json
import os

from cyborg_lite.agent.drivers import nvidia_gpu
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite import model
from tests.fixtures import sysfs_tree
from tests.unit.agent.conftest import tree_sysfs

T4 = '0000:af:00.0'


def _discover(conf, tree, root=None):
    sysfs = Sysfs(root) if root else tree_sysfs(tree)
    return nvidia_gpu.NvidiaGPUDriver(conf, sysfs).discover()


def _vgpu_conf(conf_factory, tree, types, addresses=None):
    text = '[gpu_devices]\nenabled_vgpu_types = %s\n' % ','.join(types)
    for vgpu_type, addrs in (addresses or {}).items():
        text += '[vgpu_%s]\ndevice_addresses = %s\n' % (vgpu_type,
                                                         ','.join(addrs))
    return conf_factory(tree, text)


def test_a100_pf_and_vfs_are_whole_gpus(conf_factory):
    devices = _discover(conf_factory('a100_sriov'), 'a100_sriov')
    names = [dep.name for d in devices for dep in d.deployables]
    assert names == ['compute1_0000:3b:00.0', 'compute1_0000:3b:00.4',
                     'compute1_0000:3b:00.5', 'compute1_0000:3b:00.6',
                     'compute1_0000:3b:00.7']
    pf = devices[0]
    assert (pf.type, pf.vendor, pf.model) == ('GPU', '10de',
                                              'GA100 [A100 PCIe 40GB]')
    assert pf.controlpath_info == (
        '{"bus":"3b","device":"00","domain":"0000","function":"0"}')
    assert json.loads(pf.std_board_info) == {'controller': '3D controller',
                                             'product_id': '20f1'}
    dep = pf.deployables[0]
    assert (dep.num_accelerators, dep.driver_name) == (1, 'nvidia_gpu')
    assert dep.attributes == (
        model.DriverAttribute('rc', 'PGPU'),
        model.DriverAttribute('trait0', 'OWNER_CYBORG'),
        model.DriverAttribute('trait1', 'CUSTOM_NVIDIA_20F1'))
    assert dep.attach_handles == (model.DriverAttachHandle(
        'PCI', '{"bus":"3b","device":"00","domain":"0000","function":"0"}'),)


def test_filter_sriov_vfs_keeps_only_the_pf(conf_factory):
    conf = conf_factory('a100_sriov', gpu_devices__filter_sriov_vfs=True)
    devices = _discover(conf, 'a100_sriov')
    assert [d.deployables[0].name for d in devices] == [
        'compute1_0000:3b:00.0']


def test_t4_without_vgpu_types_is_a_pgpu(conf_factory):
    [device] = _discover(conf_factory('t4_vgpu'), 't4_vgpu')
    [dep] = device.deployables
    assert dep.resource_class == 'PGPU'
    assert dep.traits == ['CUSTOM_NVIDIA_1EB8', 'OWNER_CYBORG']
    assert device.model == 'TU104GL [Tesla T4]'


def test_t4_with_an_enabled_type_is_a_vgpu(conf_factory):
    conf = _vgpu_conf(conf_factory, 't4_vgpu', ['nvidia-222'])
    [device] = _discover(conf, 't4_vgpu')
    [dep] = device.deployables
    assert dep.name == 'compute1_' + T4
    assert dep.num_accelerators == 16
    assert dep.resource_class == 'VGPU'
    assert dep.traits == ['CUSTOM_NVIDIA_1EB8_T4_1B', 'OWNER_CYBORG']
    assert [h.attach_type for h in dep.attach_handles] == ['MDEV'] * 16
    assert dep.attach_handles[3].attach_info == (
        '{"asked_type":"nvidia-222","bus":"af","device":"00",'
        '"domain":"0000","function":"0","vgpu_mark":"nvidia-222_3"}')


def test_per_type_addresses_choose_the_type(conf_factory):
    conf = _vgpu_conf(conf_factory, 't4_vgpu',
                      ['nvidia-222', 'nvidia-231'],
                      {'nvidia-222': ['0000:01:00.0'], 'nvidia-231': [T4]})
    [device] = _discover(conf, 't4_vgpu')
    [dep] = device.deployables
    assert dep.num_accelerators == 8
    assert dep.traits == ['CUSTOM_NVIDIA_1EB8_T4_2Q', 'OWNER_CYBORG']


def test_a_gpu_listed_under_no_type_is_a_pgpu(conf_factory):
    conf = _vgpu_conf(conf_factory, 't4_vgpu', ['nvidia-222'],
                      {'nvidia-222': ['0000:01:00.0']})
    [device] = _discover(conf, 't4_vgpu')
    assert device.deployables[0].resource_class == 'PGPU'


def test_a_type_the_gpu_does_not_offer_leaves_a_pgpu(conf_factory):
    conf = _vgpu_conf(conf_factory, 'a100_sriov', ['nvidia-222'])
    devices = _discover(conf, 'a100_sriov')
    assert {d.deployables[0].resource_class for d in devices} == {'PGPU'}


def test_created_mdevs_count_and_keep_the_handles_stable(conf_factory,
                                                         tmp_path):
    conf = _vgpu_conf(conf_factory, 't4_vgpu', ['nvidia-223'])
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    before = _discover(conf, None, root)
    Sysfs(root).create_mdev(T4, 'nvidia-223',
                            '0f6f8a4c-98f9-4d6c-8b5b-2f1de1c0ab12')
    sysfs_tree.kernel_create_mdev(root, T4, 'nvidia-223')
    after = _discover(conf, None, root)
    assert before == after
    assert after[0].deployables[0].num_accelerators == 8


def test_a_gpu_full_of_another_type_has_no_deployable(conf_factory):
    conf = _vgpu_conf(conf_factory, 'mixed_host', ['nvidia-222'])
    t4 = [d for d in _discover(conf, 'mixed_host')
          if d.model == 'TU104GL [Tesla T4]']
    assert [d.deployables for d in t4] == [()]


def test_mixed_host_ignores_other_vendors_and_classes(conf_factory):
    conf = _vgpu_conf(conf_factory, 'mixed_host', ['nvidia-223'])
    devices = _discover(conf, 'mixed_host')
    assert [(d.deployables[0].name, d.deployables[0].resource_class,
             d.deployables[0].num_accelerators) for d in devices] == [
        ('compute1_0000:3b:00.0', 'PGPU', 1),
        ('compute1_0000:3b:00.4', 'PGPU', 1),
        ('compute1_0000:3b:00.5', 'PGPU', 1),
        ('compute1_' + T4, 'VGPU', 8)]


def test_vgpu_trait_name_sanitises_the_type_name():
    assert nvidia_gpu.vgpu_trait_name('GRID T4-1B') == 'T4_1B'
    assert nvidia_gpu.vgpu_trait_name('NVIDIA A100-4C') == 'A100_4C'
    assert nvidia_gpu.vgpu_trait_name('GRID RTX6000-4Q') == 'RTX6000_4Q'


def test_mdevs_created_and_removed_during_discovery_never_miscount(
        conf_factory, tmp_path):
    """The agent's RPC threads create and remove mdevs while the report
    loop reads the types: every pass counts the type's 8 instances (a
    pass reading ``available_instances`` and ``devices`` on either side
    of a create counted 9)."""
    import threading
    import uuid as uuid_lib

    from cyborg_lite.agent import simulation
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    sysfs = simulation.SimulatedSysfs(root)
    conf = conf_factory(None, '[gpu_devices]\nenabled_vgpu_types = '
                        'nvidia-223\n', sysfs_root=root)
    driver = nvidia_gpu.NvidiaGPUDriver(conf, sysfs)
    stop = threading.Event()

    def bind_and_unbind():
        while not stop.is_set():
            name = str(uuid_lib.uuid4())
            sysfs.create_mdev(T4, 'nvidia-223', name)
            sysfs.remove_mdev(name)

    binder = threading.Thread(target=bind_and_unbind)
    binder.start()
    try:
        counts = {driver.discover()[0].deployables[0].num_accelerators
                  for _ in range(300)}
    finally:
        stop.set()
        binder.join()
    assert counts == {8}


def test_a_listed_gpu_without_its_type_is_not_read_as_a_pgpu(conf_factory,
                                                             tmp_path):
    """A GPU that ``device_addresses`` gives a vGPU type, whose types are
    not there (nvidia-vgpud not started yet), is skipped this pass (the
    agent reports it as read last), never a PGPU that Nova could pass
    through."""
    import shutil
    conf = _vgpu_conf(conf_factory, 't4_vgpu', ['nvidia-223'],
                      {'nvidia-223': [T4]})
    root = sysfs_tree.copy_tree('t4_vgpu', tmp_path)
    [device] = _discover(conf, None, root)
    assert device.deployables[0].resource_class == 'VGPU'
    shutil.rmtree(os.path.join(root, 'bus/pci/devices', T4,
                               'mdev_supported_types'))
    driver = nvidia_gpu.NvidiaGPUDriver(conf, Sysfs(root))
    devices, unreadable = driver.discover_pass()
    assert (devices, unreadable) == ([], {T4})
