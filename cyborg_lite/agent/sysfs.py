"""All filesystem access of the agent, rooted at ``[agent] sysfs_root``.

Drivers never open files themselves: they ask a :class:`Sysfs` for PCI
devices, their attributes and links, mdev types and FPGA ids. Pointing
the root at a fixture tree (``tests/fixtures/sysfs/<name>``) lets every
driver run against a copy of a real host's layout.

The two privileged writes, :meth:`Sysfs.create_mdev` and
:meth:`Sysfs.remove_mdev`, only write the value the kernel expects into
the control file. They do not pretend to be the kernel: on a fixture tree
nothing creates ``devices/<uuid>`` or changes ``available_instances``, and
tests that need those effects apply them with the helpers in
``tests/fixtures/sysfs_tree.py``.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re

PCI_DEVICES = 'bus/pci/devices'
MDEV_DEVICES = 'bus/mdev/devices'
MDEV_TYPES = 'mdev_supported_types'
# Legacy intel-fpga (OPAE out-of-tree) driver layout, as on a PAC card.
FME_INTERFACE_GLOB = 'fpga/intel-fpga-dev.*/intel-fpga-fme.*/pr/interface_id'
PORT_AFU_GLOB = 'fpga/intel-fpga-dev.*/intel-fpga-port.*/afu_id'

PCI_ADDRESS_RE = re.compile(
    r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')
MDEV_TYPE_RE = re.compile(r'^[A-Za-z0-9_.-]+$')
UUID_RE = re.compile(
    r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')


class SysfsError(Exception):
    """A sysfs read or write failed; the message names the path."""


@dataclasses.dataclass(frozen=True)
class PciDevice:
    """What sysfs says about one PCI function (ids without ``0x``)."""

    address: str
    vendor: str
    device: str
    class_code: str
    subsystem_vendor: str | None = None
    subsystem_device: str | None = None
    driver: str | None = None
    physfn: str | None = None
    virtfns: tuple[str, ...] = ()
    iommu_group: str | None = None

    @property
    def is_vf(self) -> bool:
        return self.physfn is not None


@dataclasses.dataclass(frozen=True)
class MdevType:
    """One entry of a device's ``mdev_supported_types``."""

    type_id: str
    name: str
    available_instances: int
    device_api: str | None = None
    description: str | None = None
    created: tuple[str, ...] = ()  # uuids listed in devices/


def _strip_hex(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().lower()
    return value[2:] if value.startswith('0x') else value


def _check_mdev_args(address: str | None, mdev_type: str | None,
                     uuid: str) -> None:
    """Refuse values that would write outside the intended file; they
    arrive over RPC."""
    if address is not None and not PCI_ADDRESS_RE.match(address):
        raise SysfsError('%r is not a PCI address' % address)
    if mdev_type is not None and (not MDEV_TYPE_RE.match(mdev_type)
                                  or mdev_type in ('.', '..')):
        raise SysfsError('%r is not an mdev type' % mdev_type)
    if not UUID_RE.match(uuid):
        raise SysfsError('%r is not a lower-case mdev uuid' % uuid)


class Sysfs:
    """Reads and writes under one sysfs root (``/sys`` on a real host)."""

    def __init__(self, root: str = '/sys') -> None:
        self.root = os.path.abspath(root)

    @classmethod
    def from_conf(cls, conf) -> Sysfs:
        return cls(conf.agent.sysfs_root)

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    # Generic reads.

    def read(self, *parts: str) -> str | None:
        """The stripped text of a file, or None when it is absent."""
        try:
            with open(self.path(*parts), encoding='utf-8') as f:
                return f.read().strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SysfsError('cannot read %s: %s'
                             % (self.path(*parts), exc)) from exc

    def link_name(self, *parts: str) -> str | None:
        """The last component of a symlink's target, or None."""
        try:
            return os.path.basename(os.readlink(self.path(*parts)))
        except (FileNotFoundError, OSError):
            return None

    def listdir(self, *parts: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(*parts)))
        except (FileNotFoundError, NotADirectoryError):
            return []

    # PCI.

    def list_pci_addresses(self) -> list[str]:
        """Addresses under ``bus/pci/devices``, sorted."""
        return [name for name in self.listdir(PCI_DEVICES)
                if PCI_ADDRESS_RE.match(name)]

    def has_pci_device(self, address: str) -> bool:
        return os.path.isdir(self.path(PCI_DEVICES, address))

    def pci_device(self, address: str) -> PciDevice:
        """Read one PCI function's ids and links."""
        def attr(name: str) -> str | None:
            return _strip_hex(self.read(PCI_DEVICES, address, name))

        vendor, device = attr('vendor'), attr('device')
        class_code = attr('class')
        if vendor is None or device is None or class_code is None:
            raise SysfsError('%s is not a PCI device'
                             % self.path(PCI_DEVICES, address))
        virtfns = sorted(
            (n for n in self.listdir(PCI_DEVICES, address)
             if n.startswith('virtfn')), key=lambda n: int(n[6:]))
        return PciDevice(
            address=address, vendor=vendor, device=device,
            class_code=class_code,
            subsystem_vendor=attr('subsystem_vendor'),
            subsystem_device=attr('subsystem_device'),
            driver=self.link_name(PCI_DEVICES, address, 'driver'),
            physfn=self.link_name(PCI_DEVICES, address, 'physfn'),
            virtfns=tuple(self.link_name(PCI_DEVICES, address, n)
                          for n in virtfns),
            iommu_group=self.link_name(PCI_DEVICES, address, 'iommu_group'))

    def list_pci_devices(self) -> list[PciDevice]:
        return [self.pci_device(a) for a in self.list_pci_addresses()]

    # Mediated devices.

    def mdev_types(self, address: str) -> dict[str, MdevType]:
        """The device's ``mdev_supported_types``, by type id."""
        types = {}
        base = (PCI_DEVICES, address, MDEV_TYPES)
        for type_id in self.listdir(*base):
            available = self.read(*base, type_id, 'available_instances')
            created = [n for n in self.listdir(*base, type_id, 'devices')
                       if UUID_RE.match(n)]
            types[type_id] = MdevType(
                type_id=type_id,
                name=self.read(*base, type_id, 'name') or type_id,
                available_instances=int(available or 0),
                device_api=self.read(*base, type_id, 'device_api'),
                description=self.read(*base, type_id, 'description'),
                created=tuple(created))
        return types

    def create_mdev(self, address: str, mdev_type: str, uuid: str) -> None:
        """Ask the kernel for an mdev of ``mdev_type`` named ``uuid``."""
        _check_mdev_args(address, mdev_type, uuid)
        create = self.path(PCI_DEVICES, address, MDEV_TYPES, mdev_type,
                           'create')
        if not os.path.exists(create):
            raise SysfsError('%s does not offer mdev type %s (no %s)'
                             % (address, mdev_type, create))
        self._write(create, uuid)

    def remove_mdev(self, uuid: str, address: str | None = None,
                    mdev_type: str | None = None) -> bool:
        """Remove the mdev ``uuid``; False when it does not exist.

        The mdev bus entry is tried first; the type's ``devices/<uuid>``
        is the fallback when the parent and type are known.
        """
        _check_mdev_args(address, mdev_type, uuid)
        candidates = [self.path(MDEV_DEVICES, uuid, 'remove')]
        if address and mdev_type:
            candidates.append(self.path(PCI_DEVICES, address, MDEV_TYPES,
                                        mdev_type, 'devices', uuid,
                                        'remove'))
        for remove in candidates:
            if os.path.exists(remove):
                self._write(remove, '1')
                return True
        return False

    # Intel FPGA (intel-fpga driver).

    def fpga_interface_ids(self, address: str) -> list[str]:
        """PR interface ids (regions) of the card's FME."""
        return self._read_glob(PCI_DEVICES, address, FME_INTERFACE_GLOB)

    def fpga_afu_ids(self, address: str) -> list[str]:
        """AFU ids of the ports that this function owns."""
        return self._read_glob(PCI_DEVICES, address, PORT_AFU_GLOB)

    def _read_glob(self, *parts: str) -> list[str]:
        values = []
        for path in sorted(glob.glob(self.path(*parts))):
            rel = os.path.relpath(path, self.root)
            value = self.read(rel)
            if value:
                values.append(value)
        return values

    @staticmethod
    def _write(path: str, value: str) -> None:
        try:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(value)
        except OSError as exc:
            raise SysfsError('cannot write %r to %s: %s'
                             % (value, path, exc)) from exc
