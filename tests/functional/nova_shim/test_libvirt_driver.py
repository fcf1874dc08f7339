"""Guest lifecycle on libvirt's test driver, XML read back from libvirt."""

import uuid

import pytest

libvirt = pytest.importorskip('libvirt')

from nova_shim import conf as shim_conf  # noqa: E402
from nova_shim import exception  # noqa: E402
from nova_shim.virt import libvirt as virt  # noqa: E402
from nova_shim.virt.power_state import PowerState  # noqa: E402

MDEV_UUID = 'b1ae6ad6-4e85-4d1e-9e0a-2d1a5c1a1c11'
PCI_ARQ = {'uuid': 'arq-pci', 'state': 'Bound', 'attach_handle_type': 'PCI',
           'attach_handle_uuid': None,
           'attach_handle_info': {'bus': '0c', 'device': '00',
                                  'domain': '0000', 'function': '1'}}
MDEV_ARQ = {'uuid': 'arq-mdev', 'state': 'Bound',
            'attach_handle_type': 'MDEV', 'attach_handle_uuid': MDEV_UUID,
            'attach_handle_info': {'asked_type': 'nvidia-223', 'bus': 'af',
                                   'device': '00', 'domain': '0000',
                                   'function': '0'}}
TEST_PCI_ARQ = {'uuid': 'arq-test', 'state': 'Bound',
                'attach_handle_type': 'TEST_PCI', 'attach_handle_uuid': None,
                'attach_handle_info': {'bus': '0c', 'device': '1',
                                       'domain': '0000', 'function': '2'}}


@pytest.fixture
def driver():
    drv = virt.LibvirtDriver(shim_conf.build_conf())
    drv.init_host()
    yield drv
    drv.cleanup_host()


@pytest.fixture
def guest(driver):
    spec = virt.GuestSpec(uuid=str(uuid.uuid4()), vcpus=1, memory_mb=128)
    yield spec
    driver.destroy(spec.uuid)


def test_spawn_attaches_every_arq(driver, guest):
    arqs = [PCI_ARQ, MDEV_ARQ, TEST_PCI_ARQ]
    driver.spawn(guest, arqs)
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
    assert driver.list_hostdevs(guest.uuid) == [
        virt.Hostdev('pci', '0000:0c:00.1'),
        virt.Hostdev('mdev', MDEV_UUID),
        virt.Hostdev('pci', '0000:0c:01.2')]
    xml = driver.get_xml(guest.uuid)
    assert "<address domain='0x0000' bus='0x0c' slot='0x00' " \
           "function='0x1'/>" in xml
    assert "<address uuid='%s'/>" % MDEV_UUID in xml


def test_stop_start_pause_unpause(driver, guest):
    driver.spawn(guest, [PCI_ARQ])
    driver.power_off(guest.uuid)
    assert driver.get_power_state(guest.uuid) == PowerState.SHUTDOWN
    driver.power_off(guest.uuid)  # stopping a stopped guest is fine
    driver.power_on(guest, [PCI_ARQ, MDEV_ARQ])  # XML regenerated
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
    assert len(driver.list_hostdevs(guest.uuid)) == 2
    driver.pause(guest.uuid)
    assert driver.get_power_state(guest.uuid) == PowerState.PAUSED
    driver.unpause(guest.uuid)
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING


def test_soft_and_hard_reboot(driver, guest):
    driver.spawn(guest, [PCI_ARQ])
    driver.reboot(guest, [PCI_ARQ], 'SOFT')
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
    assert driver.list_hostdevs(guest.uuid) == [
        virt.Hostdev('pci', '0000:0c:00.1')]
    driver.reboot(guest, [MDEV_ARQ], 'HARD')
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
    assert driver.list_hostdevs(guest.uuid) == [
        virt.Hostdev('mdev', MDEV_UUID)]


def test_destroy_undefines(driver, guest):
    driver.spawn(guest, [])
    driver.destroy(guest.uuid)
    assert guest.uuid not in driver.host.list_instance_uuids()
    # As Nova's compute finds a guest that is gone: no state, off.
    assert driver.get_power_state(guest.uuid) == PowerState.NOSTATE
    driver.power_off(guest.uuid)
    driver.destroy(guest.uuid)  # idempotent


def test_errors_say_what_libvirt_said(driver, guest):
    driver.spawn(guest, [])
    driver.power_off(guest.uuid)
    with pytest.raises(exception.HypervisorError, match='pause'):
        driver.pause(guest.uuid)
    with pytest.raises(exception.InstanceNotFound):
        driver.pause(str(uuid.uuid4()))


def test_unsupported_arq_defines_nothing(driver, guest):
    failed = dict(PCI_ARQ, state='BindFailed', attach_handle_type='',
                  attach_handle_info={})
    with pytest.raises(exception.UnsupportedAttachHandle):
        driver.spawn(guest, [failed])
    assert guest.uuid not in driver.host.list_instance_uuids()


def test_state_lives_while_the_driver_is_connected(driver, guest):
    driver.spawn(guest, [])
    # Another connection opening and closing must not reset the state.
    other = libvirt.open('test:///default')
    other.close()
    assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
