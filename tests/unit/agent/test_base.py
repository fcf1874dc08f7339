"""Driver loading, host names, helpers and FPGA programming."""

import os
import socket
import stat

import pytest
import stevedore

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.drivers import fake
from cyborg_lite.agent.drivers import intel_fpga
from cyborg_lite.agent.drivers import nvidia_gpu
from cyborg_lite.agent.drivers import xilinx_fpga
from cyborg_lite import model
from tests.unit.agent.conftest import tree_sysfs


def test_load_drivers_in_configured_order(conf_factory):
    conf = conf_factory('mixed_host', enabled_drivers=[
        'xilinx_fpga', 'nvidia_gpu', 'intel_fpga', 'fake'])
    drivers = base.load_drivers(conf)
    assert [type(d) for d in drivers] == [
        xilinx_fpga.XilinxFPGADriver, nvidia_gpu.NvidiaGPUDriver,
        intel_fpga.IntelFPGADriver, fake.FakeDriver]
    assert drivers[0].sysfs.root.endswith('mixed_host')


def test_unknown_driver_is_a_clear_error(conf_factory):
    conf = conf_factory(enabled_drivers=['fake', 'nvidia_gpu_driver'])
    with pytest.raises(base.UnknownDriverError,
                       match="unknown driver 'nvidia_gpu_driver'.*known: "
                             "fake, intel_fpga, nvidia_gpu, xilinx_fpga"):
        base.load_drivers(conf)


def test_driver_classes_match_the_builtin_table():
    classes = base.driver_classes(sorted(base.BUILTIN_DRIVERS))
    assert [c.name for c in classes] == sorted(base.BUILTIN_DRIVERS)


def test_host_name_prefers_the_provider_name(conf_factory):
    assert base.host_name(conf_factory()) == 'compute1'
    conf = conf_factory(resource_provider_name='cn1.example.org')
    assert base.host_name(conf) == 'cn1.example.org'
    conf.set_override('host', None)
    conf.clear_override('resource_provider_name', group='agent')
    # Nova's [DEFAULT] host default, the name it binds ARQs with.
    assert base.host_name(conf) == socket.gethostname()


def test_helpers():
    assert base.trait_part('9926ab6d-6c92 x') == '9926AB6D_6C92_X'
    assert base.pci_address(model.canonical_json(
        model.pci_address_info('0000:5e:00.1'))) == '0000:5e:00.1'
    attrs = base.attributes('FPGA', ['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_A'])
    assert [(a.key, a.value) for a in attrs] == [
        ('rc', 'FPGA'), ('trait0', 'CUSTOM_A'), ('trait1', 'CUSTOM_B')]


def test_drivers_without_program_refuse(conf_factory):
    driver = nvidia_gpu.NvidiaGPUDriver(conf_factory(), tree_sysfs('t4_vgpu'))
    with pytest.raises(base.ProgramError, match='cannot program'):
        driver.program('{}', '/tmp/x')


# Programming through [agent] fpga_program_command.

PF = model.canonical_json(model.pci_address_info('0000:5e:00.0'))
SCRIPT = '''#!/bin/sh
echo "$@" > "$(dirname "$0")/args"
case "$*" in
  *fail*) echo "bad bitstream" >&2; exit 3;;
  *slow*) sleep 5; echo done;;
esac
'''


@pytest.fixture
def program_driver(conf_factory, tmp_path):
    script = tmp_path / 'program.sh'
    script.write_text(SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    conf = conf_factory(fpga_program_command='%s --verbose' % script,
                        fpga_program_timeout=1)
    return intel_fpga.IntelFPGADriver(conf, tree_sysfs('arria10_pac'))


def test_program_success_passes_address_and_bitstream(program_driver,
                                                      tmp_path):
    program_driver.program(PF, '/images/nlb0.gbs')
    args = (tmp_path / 'args').read_text().split()
    assert args == ['--verbose', '0000:5e:00.0', '/images/nlb0.gbs']


def test_program_failure_raises_with_exit_code(program_driver):
    with pytest.raises(base.ProgramError,
                       match='exit code 3: bad bitstream'):
        program_driver.program(PF, '/images/fail.gbs')


def test_program_timeout_raises(program_driver):
    with pytest.raises(base.ProgramError, match='timed out after 1 s'):
        program_driver.program(PF, '/images/slow.gbs')


def test_program_unknown_device_or_command(program_driver, conf_factory):
    other = model.canonical_json(model.pci_address_info('0000:99:00.0'))
    with pytest.raises(base.ProgramError, match='no PCI device 0000:99'):
        program_driver.program(other, '/images/nlb0.gbs')
    driver = xilinx_fpga.XilinxFPGADriver(conf_factory(),
                                          tree_sysfs('alveo_u250'))
    cpid = model.canonical_json(model.pci_address_info('0000:af:00.0'))
    with pytest.raises(base.ProgramError, match='is not set'):
        driver.program(cpid, '/images/x.xclbin')
    program_driver.conf.set_override(
        'fpga_program_command', os.path.join('/nonexistent', 'prog'),
        group='agent')
    with pytest.raises(base.ProgramError, match='cannot run'):
        program_driver.program(PF, '/images/nlb0.gbs')


def test_installed_entry_points_are_used(conf_factory, tmp_path,
                                         monkeypatch):
    dist = tmp_path / 'extra_drivers-1.0.dist-info'
    dist.mkdir()
    (dist / 'METADATA').write_text(
        'Metadata-Version: 2.1\nName: extra-drivers\nVersion: 1.0\n')
    (dist / 'entry_points.txt').write_text(
        '[%s]\nxilinx_alias = %s\n' % (
            base.NAMESPACE, base.BUILTIN_DRIVERS['xilinx_fpga']))
    monkeypatch.syspath_prepend(str(tmp_path))
    # stevedore keeps the entry points it has seen per namespace.
    monkeypatch.setattr(stevedore.ExtensionManager, 'ENTRY_POINT_CACHE', {})
    conf = conf_factory('alveo_u250', enabled_drivers=['xilinx_alias'])
    [driver] = base.load_drivers(conf)
    assert isinstance(driver, xilinx_fpga.XilinxFPGADriver)
