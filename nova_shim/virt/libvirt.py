"""libvirt guests with accelerators: domain XML and guest operations.

``build_domain_xml`` is pure: from a ``GuestSpec`` and the
instance's bound ARQs (Cyborg's dicts) it writes one ``<hostdev>`` per
ARQ:

* ``PCI``: ``<hostdev mode='subsystem' type='pci' managed='yes'>`` with
  the source address from ``attach_handle_info`` (``domain``, ``bus``,
  ``device`` as the slot, ``function``; hex strings);
* ``MDEV``: ``<hostdev mode='subsystem' type='mdev' model='vfio-pci'>``
  with the mdev UUID (``attach_handle_uuid``), which Cyborg's agent
  created when it bound the ARQ. Upstream Nova cannot attach these;
* ``TEST_PCI`` (Cyborg's fake driver): treated as PCI. Its handles are
  well-formed PCI addresses, which libvirt's test driver accepts; on a
  real host the guest would fail to start, as the device does not exist.

Any other type (``""`` for an ARQ that is not Bound) raises
UnsupportedAttachHandle, rather than booting without the accelerator.

``LibvirtDriver`` runs the guests over one connection kept open
from ``init_host`` to ``cleanup_host``: the state of ``test:///default``
lives only while a connection to it is open. It uses no call specific
to the test driver, so ``qemu:///system`` works the same way.
"""

import contextlib
import dataclasses
import logging
from typing import Iterator
from xml.etree import ElementTree as ET

from oslo_config import cfg

from nova_shim import exception
from nova_shim.virt.power_state import PowerState

try:
    import libvirt
except ImportError:  # optional: the XML functions work without it
    libvirt = None

LOG = logging.getLogger(__name__)

PCI_HANDLE_TYPES = frozenset({'PCI', 'TEST_PCI'})


@dataclasses.dataclass(frozen=True)
class Hostdev:
    """A host device in a domain: ``pci`` with address ``dddd:bb:ss.f``,
    or ``mdev`` with the mdev UUID as address."""

    type: str
    address: str


@dataclasses.dataclass
class GuestSpec:
    """What the domain XML needs to know about an instance."""

    uuid: str
    vcpus: int
    memory_mb: int
    name: str | None = None  # default: instance-<uuid>
    disk_path: str | None = None  # a qcow2 root disk, if any
    # Rescue: the guest boots from this disk, its own disk second.
    rescue_disk_path: str | None = None

    @property
    def domain_name(self) -> str:
        return self.name or 'instance-%s' % self.uuid


def _pci_address(domain: str, bus: str, slot: str, function: str) -> str:
    return '%04x:%02x:%02x.%x' % (int(domain, 16), int(bus, 16),
                                  int(slot, 16), int(function, 16))


def hostdev_for_arq(arq: dict) -> Hostdev:
    """The host device a bound ARQ stands for."""
    handle_type = arq.get('attach_handle_type')
    if handle_type in PCI_HANDLE_TYPES:
        info = arq['attach_handle_info']
        return Hostdev('pci', _pci_address(info['domain'], info['bus'],
                                           info['device'], info['function']))
    if handle_type == 'MDEV':
        return Hostdev('mdev', arq['attach_handle_uuid'])
    raise exception.UnsupportedAttachHandle(arq=arq.get('uuid'),
                                            type=handle_type)


def _hostdev_element(hostdev: Hostdev) -> ET.Element:
    if hostdev.type == 'pci':
        elem = ET.Element('hostdev', mode='subsystem', type='pci',
                          managed='yes')
        domain, bus, rest = hostdev.address.split(':')
        slot, function = rest.split('.')
        ET.SubElement(ET.SubElement(elem, 'source'), 'address',
                      domain='0x' + domain, bus='0x' + bus,
                      slot='0x' + slot, function='0x' + function)
    else:
        elem = ET.Element('hostdev', mode='subsystem', type='mdev',
                          model='vfio-pci')
        ET.SubElement(ET.SubElement(elem, 'source'), 'address',
                      uuid=hostdev.address)
    return elem


def build_domain_xml(guest: GuestSpec, arqs: list[dict],
                     virt_type: str = 'test') -> str:
    """The domain XML of a guest with one ``<hostdev>`` per ARQ."""
    hostdevs = [hostdev_for_arq(arq) for arq in arqs]
    root = ET.Element('domain', type=virt_type)
    ET.SubElement(root, 'name').text = guest.domain_name
    ET.SubElement(root, 'uuid').text = guest.uuid
    ET.SubElement(root, 'memory', unit='MiB').text = str(guest.memory_mb)
    ET.SubElement(root, 'vcpu').text = str(guest.vcpus)
    os_elem = ET.SubElement(root, 'os')
    ET.SubElement(os_elem, 'type').text = 'hvm'
    ET.SubElement(os_elem, 'boot', dev='hd')
    # ACPI lets a soft reboot or shutdown reach the guest OS.
    ET.SubElement(ET.SubElement(root, 'features'), 'acpi')
    devices = ET.SubElement(root, 'devices')
    disks = [p for p in (guest.rescue_disk_path, guest.disk_path) if p]
    for target, path in zip('ab', disks, strict=False):
        disk = ET.SubElement(devices, 'disk', type='file', device='disk')
        ET.SubElement(disk, 'driver', name='qemu', type='qcow2')
        ET.SubElement(disk, 'source', file=path)
        ET.SubElement(disk, 'target', dev='vd' + target, bus='virtio')
    devices.extend(_hostdev_element(hostdev) for hostdev in hostdevs)
    ET.indent(root)
    return ET.tostring(root, encoding='unicode')


def parse_disks(domain_xml: str) -> list[str]:
    """The source files of a domain XML's disks, in order."""
    return [elem.get('file') for elem in
            ET.fromstring(domain_xml).iterfind('./devices/disk/source')]


def parse_hostdevs(domain_xml: str) -> list[Hostdev]:
    """The PCI and mdev host devices of a domain XML, in order."""
    found = []
    for elem in ET.fromstring(domain_xml).iterfind('./devices/hostdev'):
        address = elem.find('./source/address')
        if address is None:
            continue
        if elem.get('type') == 'pci':
            found.append(Hostdev('pci', _pci_address(
                address.get('domain'), address.get('bus'),
                address.get('slot'), address.get('function'))))
        elif elem.get('type') == 'mdev':
            found.append(Hostdev('mdev', address.get('uuid')))
    return found


def _ignore_libvirt_error(_ctx: object, _error: object) -> None:
    """libvirt prints every error to stderr by default; we raise them."""


# libvirt's domain states (virDomainState) -> Nova's power states.
_POWER_STATES = {0: PowerState.NOSTATE, 1: PowerState.RUNNING,
                 2: PowerState.RUNNING, 3: PowerState.PAUSED,
                 4: PowerState.SHUTDOWN, 5: PowerState.SHUTDOWN,
                 6: PowerState.CRASHED, 7: PowerState.SUSPENDED}


class Host:
    """One libvirt connection, open from ``connect`` to ``close``."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._conn = None

    def connect(self) -> None:
        if libvirt is None:
            raise exception.HypervisorError(
                op='connect', instance=self.uri,
                reason='libvirt-python is not installed')
        libvirt.registerErrorHandler(_ignore_libvirt_error, None)
        if self._conn is None:
            self._conn = libvirt.open(self.uri)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def get_connection(self):
        if self._conn is None:
            raise exception.HypervisorError(op='use', instance=self.uri,
                                            reason='not connected')
        return self._conn

    def get_domain(self, instance_uuid: str):
        """The libvirt domain of an instance, or InstanceNotFound."""
        try:
            return self.get_connection().lookupByUUIDString(instance_uuid)
        except libvirt.libvirtError as exc:
            if exc.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                raise exception.InstanceNotFound(
                    instance_id=instance_uuid) from exc
            raise

    def list_instance_uuids(self) -> list[str]:
        return [dom.UUIDString()
                for dom in self.get_connection().listAllDomains(0)]


@contextlib.contextmanager
def _hypervisor_op(op: str, instance_uuid: str) -> Iterator[None]:
    """Turn libvirt errors into HypervisorError with libvirt's reason."""
    try:
        yield
    except libvirt.libvirtError as exc:
        raise exception.HypervisorError(
            op=op, instance=instance_uuid,
            reason=exc.get_error_message() or str(exc)) from exc


class LibvirtDriver:
    """Guest operations, as Nova's libvirt driver names them."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        uri = conf.libvirt.connection_uri
        self.host = Host(uri)
        self.virt_type = conf.libvirt.virt_type or (
            'test' if uri.startswith('test:') else 'kvm')

    def init_host(self) -> None:
        self.host.connect()

    def cleanup_host(self) -> None:
        self.host.close()

    def _define(self, guest: GuestSpec, arqs: list[dict]):
        xml = build_domain_xml(guest, arqs, self.virt_type)
        LOG.debug('Domain XML of %s: %s', guest.uuid, xml)
        return self.host.get_connection().defineXML(xml)

    def spawn(self, guest: GuestSpec, arqs: list[dict]) -> None:
        """Define the guest with its accelerators and start it."""
        with _hypervisor_op('spawn', guest.uuid):
            domain = self._define(guest, arqs)
            try:
                domain.create()
            except libvirt.libvirtError:
                domain.undefine()
                raise
        LOG.info('instance %s: spawned with %d accelerators', guest.uuid,
                 len(arqs))

    def define(self, guest: GuestSpec, arqs: list[dict]) -> None:
        """Define (or redefine) the guest with its accelerators without
        starting it: a stopped guest moved to another node."""
        with _hypervisor_op('define', guest.uuid):
            self._define(guest, arqs)

    def power_off(self, instance_uuid: str) -> None:
        """Stop the guest (a hard power off); its definition stays. A
        guest that is not defined (a failed rebuild left none) is off
        already, as Nova's driver finds it."""
        try:
            domain = self.host.get_domain(instance_uuid)
        except exception.InstanceNotFound:
            LOG.info('instance %s: no guest to power off', instance_uuid)
            return
        with _hypervisor_op('power_off', instance_uuid):
            if domain.isActive():
                domain.destroy()

    def power_on(self, guest: GuestSpec, arqs: list[dict]) -> None:
        """Start a stopped guest with freshly generated XML."""
        with _hypervisor_op('power_on', guest.uuid):
            domain = self._define(guest, arqs)
            if not domain.isActive():
                domain.create()

    def pause(self, instance_uuid: str) -> None:
        domain = self.host.get_domain(instance_uuid)
        with _hypervisor_op('pause', instance_uuid):
            domain.suspend()

    def unpause(self, instance_uuid: str) -> None:
        domain = self.host.get_domain(instance_uuid)
        with _hypervisor_op('unpause', instance_uuid):
            domain.resume()

    def reboot(self, guest: GuestSpec, arqs: list[dict],
               reboot_type: str = 'SOFT') -> None:
        """Reboot the guest.

        SOFT asks the guest OS (virDomainReboot: ACPI or the guest
        agent) and keeps the XML; if libvirt refuses, it falls back to
        HARD: power off, redefine from freshly generated XML, start.
        """
        if reboot_type == 'SOFT' and self.soft_reboot(guest.uuid):
            return
        self.restart(guest, arqs)

    def soft_reboot(self, instance_uuid: str) -> bool:
        """Ask the guest OS to reboot (virDomainReboot), keeping the XML;
        False when libvirt refuses, for the caller to reboot hard."""
        domain = self.host.get_domain(instance_uuid)
        try:
            domain.reboot(0)
            return True
        except libvirt.libvirtError as exc:
            LOG.warning('instance %s: soft reboot failed (%s); rebooting '
                        'hard', instance_uuid, exc.get_error_message())
            return False

    def restart(self, guest: GuestSpec, arqs: list[dict]) -> None:
        """Power off and start from freshly generated XML: a hard
        reboot, and (with ``guest.rescue_disk_path`` set or not) Nova's
        libvirt rescue and unrescue with accelerators."""
        self.power_off(guest.uuid)
        self.power_on(guest, arqs)

    def destroy(self, instance_uuid: str) -> None:
        """Power off and undefine the guest; a missing guest is fine."""
        try:
            domain = self.host.get_domain(instance_uuid)
        except exception.InstanceNotFound:
            return
        with _hypervisor_op('destroy', instance_uuid):
            if domain.isActive():
                domain.destroy()
            domain.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)

    def get_power_state(self, instance_uuid: str) -> PowerState:
        """The guest's power state; NOSTATE when it is not defined, as
        Nova's compute records it."""
        try:
            domain = self.host.get_domain(instance_uuid)
        except exception.InstanceNotFound:
            return PowerState.NOSTATE
        state, _reason = domain.state()
        return _POWER_STATES.get(state, PowerState.NOSTATE)

    def get_xml(self, instance_uuid: str) -> str:
        """The domain XML as libvirt holds it."""
        return self.host.get_domain(instance_uuid).XMLDesc(0)

    def list_hostdevs(self, instance_uuid: str) -> list[Hostdev]:
        return parse_hostdevs(self.get_xml(instance_uuid))
