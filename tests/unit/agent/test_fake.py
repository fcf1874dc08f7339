"""The fake driver: defaults, configured devices and programming."""

import json

import pytest

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.drivers import fake
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite import model


def _driver(conf, **kwargs):
    return fake.FakeDriver(conf, Sysfs('/nonexistent'), **kwargs)


def test_default_devices(conf_factory):
    fpga, gpu = _driver(conf_factory()).discover()
    assert (fpga.type, fpga.vendor) == ('FPGA', '0xABCD')
    [dep] = fpga.deployables
    assert dep.name == 'compute1_0000:0c:00.0'
    assert (dep.num_accelerators, dep.resource_class) == (16, 'FPGA')
    assert dep.traits == ['CUSTOM_FAKE_DEVICE']
    infos = [json.loads(h.attach_info) for h in dep.attach_handles]
    assert {h.attach_type for h in dep.attach_handles} == {'PCI'}
    assert infos[0] == {'bus': '0c', 'device': '00', 'domain': '0000',
                        'function': '1'}
    assert infos[15] == {'bus': '0c', 'device': '02', 'domain': '0000',
                         'function': '0'}
    assert len({h.attach_info for h in dep.attach_handles}) == 16
    [gdep] = gpu.deployables
    assert (gdep.resource_class, gdep.traits) == ('PGPU', ['CUSTOM_FAKE_GPU'])
    assert gdep.attach_handles == (model.DriverAttachHandle(
        'PCI', '{"bus":"0d","device":"00","domain":"0000","function":"0"}'),)


def test_fake_fpga_handles_option(conf_factory):
    fpga, _ = _driver(conf_factory(fake_fpga_handles=4)).discover()
    assert fpga.deployables[0].num_accelerators == 4


def test_fake_devices_option_and_constructor(conf_factory):
    spec = [{'type': 'GPU', 'address': '0000:41:00.0', 'handles': 1,
             'traits': ['CUSTOM_A', 'CUSTOM_B']}]
    conf = conf_factory(fake_devices=json.dumps(spec))
    [gpu] = _driver(conf, hostname='sim-3').discover()
    assert gpu.deployables[0].name == 'sim-3_0000:41:00.0'
    assert gpu.deployables[0].traits == ['CUSTOM_A', 'CUSTOM_B']
    [fpga] = _driver(conf, devices=[{'type': 'FPGA',
                                     'address': '0000:42:00.0'}]).discover()
    assert fpga.deployables[0].resource_class == 'FPGA'


def test_bad_fake_spec_is_rejected(conf_factory):
    with pytest.raises(base.DriverError, match='needs "address"'):
        _driver(conf_factory(), devices=[{'type': 'NIC', 'address': 'x'}])


def test_program_records_the_bitstream(conf_factory):
    driver = _driver(conf_factory())
    cpid = model.canonical_json(model.pci_address_info('0000:0c:00.0'))
    driver.program(cpid, '/tmp/image.gbs')
    assert driver.programmed == {'0000:0c:00.0': '/tmp/image.gbs'}
    other = model.canonical_json(model.pci_address_info('0000:99:00.0'))
    with pytest.raises(base.ProgramError, match='no fake device'):
        driver.program(other, '/tmp/image.gbs')
