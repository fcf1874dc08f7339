"""Domain XML built from accelerator requests."""

from xml.etree import ElementTree as ET

import pytest

from nova_shim import exception
from nova_shim.virt import libvirt as virt

GUEST = virt.GuestSpec(uuid='6a5e9b8c-3f0e-4c55-9d2a-1d2f3c4b5a69',
                       vcpus=2, memory_mb=512)
MDEV_UUID = 'b1ae6ad6-4e85-4d1e-9e0a-2d1a5c1a1c11'


def pci_arq(bus='0c', device='00', function='1', kind='PCI'):
    return {'uuid': 'arq-pci-%s-%s' % (bus, function), 'state': 'Bound',
            'attach_handle_type': kind, 'attach_handle_uuid': None,
            'attach_handle_info': {'bus': bus, 'device': device,
                                   'domain': '0000', 'function': function}}


def mdev_arq():
    return {'uuid': 'arq-mdev', 'state': 'Bound',
            'attach_handle_type': 'MDEV', 'attach_handle_uuid': MDEV_UUID,
            'attach_handle_info': {'asked_type': 'nvidia-223', 'bus': 'af',
                                   'device': '00', 'domain': '0000',
                                   'function': '0',
                                   'vgpu_mark': 'nvidia-223_3'}}


def hostdevs(xml):
    return ET.fromstring(xml).findall('./devices/hostdev')


def test_pci_arq_becomes_managed_pci_hostdev():
    (elem,) = hostdevs(virt.build_domain_xml(GUEST, [pci_arq()]))
    assert elem.attrib == {'mode': 'subsystem', 'type': 'pci',
                           'managed': 'yes'}
    assert elem.find('./source/address').attrib == {
        'domain': '0x0000', 'bus': '0x0c', 'slot': '0x00', 'function': '0x1'}


def test_mdev_arq_becomes_mdev_hostdev_with_handle_uuid():
    (elem,) = hostdevs(virt.build_domain_xml(GUEST, [mdev_arq()]))
    assert elem.attrib == {'mode': 'subsystem', 'type': 'mdev',
                           'model': 'vfio-pci'}
    assert elem.find('./source/address').attrib == {'uuid': MDEV_UUID}


def test_test_pci_unpadded_handle_is_treated_as_pci():
    arq = pci_arq(bus='0c', device='1', function='7', kind='TEST_PCI')
    assert virt.hostdev_for_arq(arq) == virt.Hostdev('pci', '0000:0c:01.7')


def test_one_hostdev_per_arq_in_order_and_parsed_back():
    arqs = [pci_arq('af', '00', '0'), mdev_arq(), pci_arq('0c', '00', '1')]
    xml = virt.build_domain_xml(GUEST, arqs)
    assert virt.parse_hostdevs(xml) == [
        virt.Hostdev('pci', '0000:af:00.0'), virt.Hostdev('mdev', MDEV_UUID),
        virt.Hostdev('pci', '0000:0c:00.1')]


def test_guest_fields():
    xml = virt.build_domain_xml(GUEST, [], virt_type='kvm')
    root = ET.fromstring(xml)
    assert root.get('type') == 'kvm'
    assert root.findtext('name') == 'instance-' + GUEST.uuid
    assert root.findtext('uuid') == GUEST.uuid
    assert root.find('memory').attrib == {'unit': 'MiB'}
    assert root.findtext('memory') == '512'
    assert root.findtext('vcpu') == '2'
    assert root.find('./devices/disk') is None


def test_disk_path_adds_a_root_disk():
    guest = virt.GuestSpec(uuid=GUEST.uuid, vcpus=1, memory_mb=256,
                           name='vm1', disk_path='/var/lib/vm1.qcow2')
    root = ET.fromstring(virt.build_domain_xml(guest, []))
    assert root.findtext('name') == 'vm1'
    assert root.find('./devices/disk/source').get('file') == \
        '/var/lib/vm1.qcow2'


@pytest.mark.parametrize('handle_type', ['', None, 'NVMF'])
def test_unbound_or_unknown_handle_type_is_refused(handle_type):
    arq = {'uuid': 'arq-1', 'state': 'BindFailed',
           'attach_handle_type': handle_type, 'attach_handle_info': {}}
    with pytest.raises(exception.UnsupportedAttachHandle, match='arq-1'):
        virt.build_domain_xml(GUEST, [pci_arq(), arq])


def test_names_are_escaped():
    guest = virt.GuestSpec(uuid=GUEST.uuid, vcpus=1, memory_mb=64,
                           name='a<b&c')
    assert ET.fromstring(virt.build_domain_xml(guest, [])).findtext(
        'name') == 'a<b&c'
