"""All filesystem access of the agent, rooted at ``[agent] sysfs_root``.

Drivers never open files themselves: they ask a ``Sysfs`` for PCI
devices, their attributes and links, mdev types and FPGA ids. Pointing
the root at a fixture tree (``tests/fixtures/sysfs/<name>``) lets every
driver run against a copy of a real host's layout.

A real host is not always tidy: a card is unplugged while the agent
reads it, a driver is half bound, a firmware writes odd bytes. So every
path is resolved, links included, and refused when it leaves the root;
an attribute is read only when it is a regular file, and at most
``MAX_ATTR_BYTES`` of it; and each value is checked for its shape
(hex ids, small counts, printable names) before a driver sees it. What
fails raises ``SysfsError`` naming the path and why, and
``Sysfs.list_pci_devices`` leaves such a function out with one
warning, so that one broken device never hides the others.

The two privileged writes, ``Sysfs.create_mdev`` and
``Sysfs.remove_mdev``, only write the value the kernel expects into
the control file, as root through ``cyborg_lite.privsep.sysfs``: the
agent itself runs unprivileged. They do not pretend to be the kernel:
on a fixture tree nothing creates ``devices/<uuid>`` or changes
``available_instances``, and tests that need those effects apply them
with the helpers in
``tests/fixtures/sysfs_tree.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import logging
import os
import re
import stat
import threading

from cyborg_lite.agent import names as agent_names
from cyborg_lite import privsep
from cyborg_lite.privsep import sysfs as privsep_sysfs

LOG = logging.getLogger(__name__)

PCI_DEVICES = 'bus/pci/devices'
MDEV_DEVICES = 'bus/mdev/devices'
# Legacy intel-fpga (OPAE out-of-tree) driver layout, as on a PAC card.
FME_INTERFACE_GLOB = 'fpga/intel-fpga-dev.*/intel-fpga-fme.*/pr/interface_id'
PORT_AFU_GLOB = 'fpga/intel-fpga-dev.*/intel-fpga-port.*/afu_id'

# The kernel's sysfs attributes hold at most one page; a longer file is
# no attribute, and reading it whole could take all the agent's memory.
MAX_ATTR_BYTES = 4096
# Instances of an mdev type, mdevs of a type, VFs of a function: real
# cards have tens at most; more would only make a huge report.
MAX_INSTANCES = 1024
# Names that end up in traits and models (mdev type names such as
# ``GRID T4-2B``); Placement takes traits of up to 255 characters.
MAX_NAME_CHARS = 64
# FPGA region and function ids of one card.
MAX_FPGA_IDS = 64

HEX_ID_RES = {4: re.compile(r'^[0-9a-f]{4}$'),   # vendor, device
              6: re.compile(r'^[0-9a-f]{6}$')}   # class
COUNT_RE = re.compile(r'^[0-9]{1,7}$')
VIRTFN_RE = re.compile(r'^virtfn[0-9]{1,5}$')
DRIVER_NAME_RE = re.compile(r'^[A-Za-z0-9_.+-]{1,64}$')
IOMMU_GROUP_RE = re.compile(r'^[0-9]{1,7}$')
# A PR interface or AFU id: 128 bits in hex, dashes allowed.
FPGA_ID_RE = re.compile(r'^[0-9a-f]{8}(-?[0-9a-f]{4}){3}-?[0-9a-f]{12}$')


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


# Shape checks: each takes the stripped text and the path it came from.

def _show(value: str) -> str:
    """``value`` for a message: repr'd, at most 40 characters of it."""
    if len(value) > 40:
        return repr(value[:40]) + '...'
    return repr(value)


def hex_id(value: str, width: int, path: str) -> str:
    """``0x10de`` -> ``10de``; refuses anything but ``width`` hex digits."""
    text = value.lower()
    text = text[2:] if text.startswith('0x') else text
    if not HEX_ID_RES[width].match(text):
        raise SysfsError('%s holds %s, not a %d-digit hex id'
                         % (path, _show(value), width))
    return text


def count(value: str, path: str, limit: int = MAX_INSTANCES) -> int:
    """A decimal count from 0 to ``limit``."""
    if not COUNT_RE.match(value) or int(value) > limit:
        raise SysfsError('%s holds %s, not a count from 0 to %d'
                         % (path, _show(value), limit))
    return int(value)


def printable_name(value: str, path: str,
                   limit: int = MAX_NAME_CHARS) -> str:
    """A non-empty printable name of at most ``limit`` characters."""
    if not value or len(value) > limit or not value.isprintable():
        raise SysfsError('%s holds %s, not a printable name of 1 to %d '
                         'characters' % (path, _show(value), limit))
    return value


def _check_mdev_args(address: str | None, mdev_type: str | None,
                     uuid: str) -> None:
    """Refuse values that would write outside the intended file; they
    arrive over RPC."""
    if address is not None and not agent_names.PCI_ADDRESS_RE.match(address):
        raise SysfsError('%r is not a PCI address' % address)
    if mdev_type is not None:
        _check_mdev_type(mdev_type)
    if not agent_names.UUID_RE.match(uuid):
        raise SysfsError('%r is not a lower-case mdev uuid' % uuid)


def _check_mdev_type(mdev_type: str) -> None:
    if not agent_names.MDEV_TYPE_RE.match(mdev_type) or \
            mdev_type in ('.', '..'):
        raise SysfsError('%r is not an mdev type' % mdev_type)


_ABSENT = (FileNotFoundError, NotADirectoryError)


# Held while an mdev type is read and while an mdev is created or
# removed: a type's ``available_instances`` and its ``devices`` are two
# reads, and an mdev that the agent's RPC thread created or removed
# between them would make the report's count of instances one off (a
# vGPU that does not exist, in Placement and as a handle, or one missing
# that may be in use). Reentrant, so that a sysfs that acts as the
# kernel (the simulation) holds it across its write and the kernel's
# answer.
MDEV_LOCK = threading.RLock()


class Sysfs:
    """Reads and writes under one sysfs root (``/sys`` on a real host)."""

    def __init__(self, root: str = '/sys') -> None:
        self.root = os.path.abspath(root)
        # Links resolve to real paths: compare them with the real root,
        # so that a root reached through a link still holds its files.
        self._real_root = os.path.realpath(self.root)
        self._root_prefix = os.path.join(self._real_root, '')
        self._pass = threading.local()

    @classmethod
    def from_conf(cls, conf) -> Sysfs:
        return cls(conf.agent.sysfs_root)

    def path(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    # Resolution: every access goes through here.

    def _inside(self, real: str) -> bool:
        return real == self._real_root or real.startswith(self._root_prefix)

    def _resolve(self, *parts: str) -> str:
        """The real path of ``parts``, links followed.

        Raises FileNotFoundError or NotADirectoryError when it does not
        exist, and SysfsError on a link loop or when it leaves the root.
        """
        path = self.path(*parts)
        if path == self.root:
            return self._real_root
        head, tail = os.path.split(path)
        try:
            real_head = self._real_dir(head)
            real = os.path.join(real_head, tail)
            if tail in ('.', '..') or stat.S_ISLNK(os.lstat(real).st_mode):
                real = os.path.realpath(real, strict=True)
        except _ABSENT:
            raise
        except OSError as exc:
            raise SysfsError('cannot resolve %s: %s'
                             % (path, exc.strerror or exc)) from exc
        if not self._inside(real):
            raise SysfsError('%s leads outside the sysfs root %s (to %s)'
                             % (path, self.root, real))
        return real

    def _real_dir(self, path: str) -> str:
        """``os.path.realpath(path, strict=True)``, refused outside the
        root, and remembered for the rest of a discovery pass: a pass
        reads many files of each directory."""
        cache = getattr(self._pass, 'dirs', None)
        if cache is not None and path in cache:
            return cache[path]
        real = os.path.realpath(path, strict=True)
        if not self._inside(real):
            raise SysfsError('%s leads outside the sysfs root %s (to %s)'
                             % (path, self.root, real))
        if cache is not None:
            cache[path] = real
        return real

    # Generic reads.

    def read(self, *parts: str) -> str | None:
        """The stripped text of an attribute, or None when it is absent.

        Only a regular file inside the root is read (a FIFO or a device
        node is not even opened), at most ``MAX_ATTR_BYTES`` of it,
        and it must be UTF-8; otherwise SysfsError.
        """
        path = self.path(*parts)
        try:
            real = self._resolve(*parts)
            if not stat.S_ISREG(os.stat(real).st_mode):
                raise SysfsError('%s is not a regular file' % path)
            # O_NONBLOCK: should a FIFO be swapped in after the check, the
            # open does not wait for a writer; fstat then refuses it.
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
                         | os.O_CLOEXEC)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise SysfsError('%s is not a regular file' % path)
                data = _read_bounded(fd, MAX_ATTR_BYTES + 1)
            finally:
                os.close(fd)
        except _ABSENT:
            return None
        except OSError as exc:
            raise SysfsError('cannot read %s: %s'
                             % (path, exc.strerror or exc)) from exc
        if len(data) > MAX_ATTR_BYTES:
            raise SysfsError('%s holds more than %d bytes; no attribute is '
                             'that long' % (path, MAX_ATTR_BYTES))
        try:
            return data.decode('utf-8').strip()
        except UnicodeDecodeError:
            raise SysfsError('%s is not UTF-8 text' % path) from None

    def link_name(self, *parts: str) -> str | None:
        """The last component of a symlink's target, or None when there
        is no such link; SysfsError when the link points outside the
        root. The target itself is not opened, only named."""
        path = self.path(*parts)
        try:
            target = os.readlink(path)
            real_dir = self._real_dir(os.path.dirname(path))
        except OSError:
            return None  # absent, or not a link
        real = os.path.normpath(os.path.join(real_dir, target))
        if not self._inside(real):
            raise SysfsError('%s leads outside the sysfs root %s (to %s)'
                             % (path, self.root, real))
        return os.path.basename(real)

    def listdir(self, *parts: str) -> list[str]:
        """The sorted names in a directory; [] when it is absent."""
        path = self.path(*parts)
        try:
            return sorted(os.listdir(self._resolve(*parts)))
        except _ABSENT:
            return []
        except OSError as exc:
            raise SysfsError('cannot list %s: %s'
                             % (path, exc.strerror or exc)) from exc

    def _exists(self, *parts: str) -> bool:
        try:
            self._resolve(*parts)
        except _ABSENT:
            return False
        return True

    # PCI.

    def list_pci_addresses(self) -> list[str]:
        """Addresses under ``bus/pci/devices``, sorted."""
        return [name for name in self.listdir(PCI_DEVICES)
                if agent_names.PCI_ADDRESS_RE.match(name)]

    def has_pci_device(self, address: str) -> bool:
        if not agent_names.PCI_ADDRESS_RE.match(address):
            return False
        try:
            return os.path.isdir(self._resolve(PCI_DEVICES, address))
        except (SysfsError, *_ABSENT):
            return False

    def _gone(self, address: str, what: str) -> SysfsError:
        """The error for a file of ``address`` that is missing: the
        device is gone (unplugged while it was read), or lacks ``what``."""
        if not self._exists(PCI_DEVICES, address):
            return SysfsError('%s is not a PCI device: no such file or '
                              'directory %s (unplugged?)'
                              % (address, self.path(PCI_DEVICES, address)))
        return SysfsError('%s has no %s' % (address, what))

    def _pci_id(self, address: str, name: str, width: int,
                required: bool = True) -> str | None:
        value = self.read(PCI_DEVICES, address, name)
        if value is None:
            if required:
                raise self._gone(address, '%s file; it is no PCI device'
                                 % name)
            return None
        return hex_id(value, width, self.path(PCI_DEVICES, address, name))

    def _pci_link(self, address: str, name: str) -> str | None:
        """The PCI address a link of ``address`` names (``physfn``...)."""
        target = self.link_name(PCI_DEVICES, address, name)
        if target is not None and not agent_names.PCI_ADDRESS_RE.match(target):
            raise SysfsError('%s names %s, not a PCI address'
                             % (self.path(PCI_DEVICES, address, name),
                                _show(target)))
        return target

    def _shaped_link(self, address: str, name: str,
                     shape: re.Pattern) -> str | None:
        target = self.link_name(PCI_DEVICES, address, name)
        if target is not None and not shape.match(target):
            raise SysfsError('%s names %s, not a %s'
                             % (self.path(PCI_DEVICES, address, name),
                                _show(target), name))
        return target

    def pci_device(self, address: str) -> PciDevice:
        """Read one PCI function's ids and links; SysfsError when the
        function is absent, gone or broken."""
        if not agent_names.PCI_ADDRESS_RE.match(address):
            raise SysfsError('%s is not a PCI address' % _show(address))
        try:
            devdir = self._resolve(PCI_DEVICES, address)
        except _ABSENT:
            raise self._gone(address, 'directory') from None
        if not os.path.isdir(devdir):
            raise SysfsError('%s is not a PCI device: %s is not a directory'
                             % (address, self.path(PCI_DEVICES, address)))
        vendor = self._pci_id(address, 'vendor', 4)
        device = self._pci_id(address, 'device', 4)
        class_code = self._pci_id(address, 'class', 6)
        virtfns = [n for n in self.listdir(PCI_DEVICES, address)
                   if VIRTFN_RE.match(n)]
        if len(virtfns) > MAX_INSTANCES:
            raise SysfsError('%s has %d virtfn links; at most %d are taken'
                             % (address, len(virtfns), MAX_INSTANCES))
        virtfns.sort(key=lambda n: int(n[6:]))
        found = PciDevice(
            address=address, vendor=vendor, device=device,
            class_code=class_code,
            subsystem_vendor=self._pci_id(address, 'subsystem_vendor', 4,
                                          required=False),
            subsystem_device=self._pci_id(address, 'subsystem_device', 4,
                                          required=False),
            driver=self._shaped_link(address, 'driver', DRIVER_NAME_RE),
            physfn=self._pci_link(address, 'physfn'),
            virtfns=tuple(vf for vf in (self._pci_link(address, n)
                                        for n in virtfns) if vf),
            iommu_group=self._shaped_link(address, 'iommu_group',
                                          IOMMU_GROUP_RE))
        # Unplugged while it was read: what was read may be half of it.
        if not self._exists(PCI_DEVICES, address):
            raise self._gone(address, 'directory')
        return found

    @contextlib.contextmanager
    def discovery_pass(self):
        """One discovery pass (in this thread): ``list_pci_devices``
        reads the bus once, so every driver of the pass sees the same
        functions, and a broken one is logged once, not once per
        driver. The directories the pass resolves are remembered until
        it ends (files are still resolved on every read)."""
        state = self._pass
        if getattr(state, 'active', False):
            yield self
            return
        state.active, state.devices, state.dirs = True, None, {}
        state.unreadable = set()
        try:
            yield self
        finally:
            state.active, state.devices, state.dirs = False, None, None
            state.unreadable = set()

    def list_pci_devices(self) -> list[PciDevice]:
        """Every readable PCI function; one that is not (gone, a file
        missing or of the wrong shape, a link out of the root) is left
        out with one warning that names it and why."""
        state = self._pass
        in_pass = getattr(state, 'active', False)
        if in_pass and state.devices is not None:
            return list(state.devices)
        devices, unreadable = [], set()
        for address in self.list_pci_addresses():
            try:
                devices.append(self.pci_device(address))
            except SysfsError as exc:
                LOG.warning('Skipping PCI device %s: %s', address, exc)
                unreadable.add(address)
        if in_pass:
            state.devices, state.unreadable = devices, unreadable
        return list(devices)

    def unreadable_addresses(self) -> set[str]:
        """The PCI functions the current pass lists but could not read
        (none outside a pass)."""
        state = self._pass
        if not getattr(state, 'active', False):
            return set()
        return set(getattr(state, 'unreadable', None) or ())

    # Mediated devices.

    def mdev_type(self, address: str, type_id: str) -> MdevType | None:
        """One entry of the device's ``mdev_supported_types``; None when
        the device does not offer that type."""
        if not agent_names.PCI_ADDRESS_RE.match(address):
            raise SysfsError('%s is not a PCI address' % _show(address))
        _check_mdev_type(type_id)
        with MDEV_LOCK:
            return self._mdev_type(address, type_id)

    def _mdev_type(self, address: str, type_id: str) -> MdevType | None:
        base = (PCI_DEVICES, address, agent_names.MDEV_TYPES, type_id)
        if not self._exists(*base):
            # The type there now, or the device gone: the device went
            # and came back between the two looks (a hot-unplug and
            # replug), and this pass cannot say what it offers.
            if not self._exists(PCI_DEVICES, address) or \
                    self._exists(*base):
                raise self._gone(address, 'directory')
            return None
        path = self.path(*base)
        available = self.read(*base, 'available_instances')
        if available is None:
            raise self._gone(address, 'available_instances for mdev type %s'
                             % type_id)
        available = count(available,
                          os.path.join(path, 'available_instances'))
        created = [n for n in self.listdir(*base, 'devices')
                   if agent_names.UUID_RE.match(n)]
        if len(created) > MAX_INSTANCES:
            raise SysfsError('%s/devices lists %d mdevs; at most %d are '
                             'taken' % (path, len(created), MAX_INSTANCES))
        name = self.read(*base, 'name')
        if name is not None:
            name = printable_name(name, os.path.join(path, 'name'))
        found = MdevType(
            type_id=type_id, name=name or type_id,
            available_instances=available,
            device_api=self.read(*base, 'device_api'),
            description=self.read(*base, 'description'),
            created=tuple(created))
        if not self._exists(*base):
            raise self._gone(address, 'mdev type %s any more' % type_id)
        return found

    def mdev_types(self, address: str) -> dict[str, MdevType]:
        """The device's ``mdev_supported_types``, by type id."""
        types = {}
        for type_id in self.listdir(PCI_DEVICES, address,
                                    agent_names.MDEV_TYPES):
            if agent_names.MDEV_TYPE_RE.match(type_id) and \
                    type_id not in ('.', '..'):
                found = self.mdev_type(address, type_id)
                if found is not None:
                    types[type_id] = found
        return types

    def create_mdev(self, address: str, mdev_type: str, uuid: str) -> None:
        """Ask the kernel for an mdev of ``mdev_type`` named ``uuid``."""
        _check_mdev_args(address, mdev_type, uuid)
        parts = (PCI_DEVICES, address, agent_names.MDEV_TYPES, mdev_type,
                 'create')
        try:
            create = self._resolve(*parts)
        except _ABSENT:
            raise SysfsError('%s does not offer mdev type %s (no %s)'
                             % (address, mdev_type,
                                self.path(*parts))) from None
        with MDEV_LOCK:
            self._write(create, uuid)

    def has_mdev(self, address: str, mdev_type: str, uuid: str) -> bool:
        """Whether ``address`` has the mdev ``uuid`` of ``mdev_type``."""
        _check_mdev_args(address, mdev_type, uuid)
        try:
            self._resolve(PCI_DEVICES, address, agent_names.MDEV_TYPES,
                          mdev_type, 'devices', uuid)
        except _ABSENT:
            return False
        return True

    def remove_mdev(self, uuid: str, address: str | None = None,
                    mdev_type: str | None = None) -> bool:
        """Remove the mdev ``uuid``; False when it does not exist.

        The mdev bus entry is tried first; the type's ``devices/<uuid>``
        is the fallback when the parent and type are known.
        """
        _check_mdev_args(address, mdev_type, uuid)
        candidates = [(MDEV_DEVICES, uuid, 'remove')]
        if address and mdev_type:
            candidates.append((PCI_DEVICES, address, agent_names.MDEV_TYPES,
                               mdev_type, 'devices', uuid, 'remove'))
        for parts in candidates:
            try:
                remove = self._resolve(*parts)
            except _ABSENT:
                continue
            with MDEV_LOCK:
                self._write(remove, '1')
            return True
        return False

    # Intel FPGA (intel-fpga driver).

    def fpga_interface_ids(self, address: str) -> list[str]:
        """PR interface ids (regions) of the card's FME."""
        return self._fpga_ids(address, FME_INTERFACE_GLOB)

    def fpga_afu_ids(self, address: str) -> list[str]:
        """AFU ids of the ports that this function owns."""
        return self._fpga_ids(address, PORT_AFU_GLOB)

    def _fpga_ids(self, address: str, pattern: str) -> list[str]:
        values = []
        for parts in self._glob((PCI_DEVICES, address), pattern):
            value = self.read(*parts)
            if not value:
                continue
            if not FPGA_ID_RE.match(value.lower()):
                raise SysfsError('%s holds %s, not a 128-bit hex id'
                                 % (self.path(*parts), _show(value)))
            values.append(value)
        if len(values) > MAX_FPGA_IDS:
            raise SysfsError('%s has %d FPGA ids; at most %d are taken'
                             % (address, len(values), MAX_FPGA_IDS))
        return values

    def _glob(self, base: tuple[str, ...],
              pattern: str) -> list[tuple[str, ...]]:
        """Paths under ``base`` that match ``pattern`` (``*`` within a
        component), found with ``listdir`` so that no link takes the
        search out of the root."""
        found = [base]
        for component in pattern.split('/'):
            if not any(c in component for c in '*?['):
                found = [parts + (component,) for parts in found]
                continue
            found = [parts + (name,) for parts in found
                     for name in self.listdir(*parts)
                     if fnmatch.fnmatchcase(name, component)]
        return sorted(found)

    @staticmethod
    def _write(path: str, value: str) -> None:
        """Write ``value`` into the control attribute at the real path
        ``path``: as root, through the privileged writer
        (``cyborg_lite.privsep.sysfs``), which takes only mdev
        creations and removals."""
        try:
            privsep_sysfs.write_control_attribute(path, value)
        except (OSError, privsep.RefusedAction) as exc:
            reason = getattr(exc, 'strerror', None) or exc
            raise SysfsError('cannot write %r to %s: %s'
                             % (value, path, reason)) from exc


def _read_bounded(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``fd``, fewer at its end."""
    chunks = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b''.join(chunks)
