"""The Intel and Xilinx FPGA drivers against their fixture trees."""

import json

from cyborg_lite.agent.drivers import intel_fpga
from cyborg_lite.agent.drivers import xilinx_fpga
from cyborg_lite import model
from tests.unit.agent.conftest import tree_sysfs

REGION = 'CUSTOM_FPGA_REGION_INTEL_9926AB6D6C925A68AABCA7D84C545738'
FUNCTION = 'CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A3C413F89E433683F9040B'


def _pci(address):
    return model.DriverAttachHandle(
        'PCI', model.canonical_json(model.pci_address_info(address)))


def test_arria10_pf_with_a_vf_offers_the_vf(conf_factory):
    driver = intel_fpga.IntelFPGADriver(conf_factory(),
                                        tree_sysfs('arria10_pac'))
    [device] = driver.discover()
    assert (device.type, device.vendor, device.model) == (
        'FPGA', '8086', 'PAC_ARRIA10')
    assert json.loads(device.controlpath_info) == model.pci_address_info(
        '0000:5e:00.0')
    assert json.loads(device.std_board_info) == {'product_id': '09c4'}
    [dep] = device.deployables
    assert dep.name == 'compute1_0000:5e:00.0'
    assert (dep.num_accelerators, dep.driver_name) == (1, 'intel_fpga')
    assert dep.attributes == (
        model.DriverAttribute('rc', 'FPGA'),
        model.DriverAttribute('trait0', 'CUSTOM_FPGA_INTEL'),
        model.DriverAttribute('trait1', 'CUSTOM_FPGA_INTEL_PAC_ARRIA10'),
        model.DriverAttribute('trait2', REGION),
        model.DriverAttribute('trait3', FUNCTION))
    assert dep.attach_handles == (_pci('0000:5e:00.1'),)


def test_arria10_pf_without_vfs_offers_itself(conf_factory):
    driver = intel_fpga.IntelFPGADriver(conf_factory(),
                                        tree_sysfs('mixed_host'))
    [device] = driver.discover()
    [dep] = device.deployables
    assert dep.attach_handles == (_pci('0000:5e:00.0'),)
    assert dep.traits == sorted(['CUSTOM_FPGA_INTEL',
                                 'CUSTOM_FPGA_INTEL_PAC_ARRIA10',
                                 REGION, FUNCTION])


def test_intel_driver_finds_nothing_on_other_trees(conf_factory):
    for tree in ('a100_sriov', 't4_vgpu', 'alveo_u250'):
        driver = intel_fpga.IntelFPGADriver(conf_factory(), tree_sysfs(tree))
        assert driver.discover() == []


def test_u250_is_one_device_with_mgmt_and_user_handles(conf_factory):
    driver = xilinx_fpga.XilinxFPGADriver(conf_factory(),
                                          tree_sysfs('alveo_u250'))
    [device] = driver.discover()
    assert (device.type, device.vendor, device.model) == ('FPGA', '10ee',
                                                          'U250')
    assert json.loads(device.std_board_info) == {'product_id': '5004'}
    [dep] = device.deployables
    assert dep.name == 'compute1_0000:af:00.0'
    assert (dep.num_accelerators, dep.driver_name) == (1, 'xilinx_fpga')
    assert dep.attributes == (
        model.DriverAttribute('rc', 'FPGA'),
        model.DriverAttribute('trait0', 'CUSTOM_FPGA_XILINX'),
        model.DriverAttribute('trait1', 'CUSTOM_FPGA_PRODUCT_ID_5004'))
    assert dep.attach_handles == (_pci('0000:af:00.0'),
                                  _pci('0000:af:00.1'))


def test_xilinx_on_the_mixed_host(conf_factory):
    driver = xilinx_fpga.XilinxFPGADriver(conf_factory(),
                                          tree_sysfs('mixed_host'))
    assert [d.deployables[0].name for d in driver.discover()] == [
        'compute1_0000:d8:00.0']


def test_hostname_argument_names_the_deployables(conf_factory):
    driver = xilinx_fpga.XilinxFPGADriver(
        conf_factory(), tree_sysfs('alveo_u250'), hostname='node7.example')
    assert driver.discover()[0].deployables[0].name == (
        'node7.example_0000:af:00.0')


def test_drivers_ignore_trees_without_their_cards(conf_factory):
    from cyborg_lite.agent.drivers import nvidia_gpu
    cases = [(nvidia_gpu.NvidiaGPUDriver, ('arria10_pac', 'alveo_u250')),
             (xilinx_fpga.XilinxFPGADriver,
              ('a100_sriov', 't4_vgpu', 'arria10_pac'))]
    for cls, trees in cases:
        for tree in trees:
            assert cls(conf_factory(), tree_sysfs(tree)).discover() == []
