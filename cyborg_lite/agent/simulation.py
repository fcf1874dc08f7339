"""Simulated hosts: sysfs trees of real cards, and the kernel's part.

The all-in-one's simulated hosts and the tests' fixture trees are built
here. ``Tree`` writes a sysfs layout the way the kernel lays it out
(functions under ``devices/pci<domain>:<bus>/<bridge>/<address>``, with
``bus/pci/devices``, driver, IOMMU group, ``class/mdev_bus`` and
``class/fpga`` symlinks), with the ids and mdev types of real cards.

A tree has no kernel behind it: writing a uuid into an mdev type's
``create`` file only leaves it in the file. ``kernel_create_mdev``
and ``kernel_remove_mdev`` apply what the kernel would then do, and
``SimulatedSysfs`` applies them after each write, so a simulated
host behaves like a real one.
"""

from __future__ import annotations

import os
import shutil

from cyborg_lite.agent import sysfs as sysfs_lib
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.agent.sysfs import SysfsError

T4_VGPU_TYPES = [  # (type, name, heads, frl, framebuffer MB, resolution)
    ('nvidia-222', 'GRID T4-1B', 4, 45, 1024, '5120x2880'),
    ('nvidia-223', 'GRID T4-2B', 4, 45, 2048, '5120x2880'),
    ('nvidia-224', 'GRID T4-2B4', 4, 45, 2048, '5120x2880'),
    ('nvidia-225', 'GRID T4-1A', 1, 60, 1024, '1280x1024'),
    ('nvidia-226', 'GRID T4-2A', 1, 60, 2048, '1280x1024'),
    ('nvidia-227', 'GRID T4-4A', 1, 60, 4096, '1280x1024'),
    ('nvidia-228', 'GRID T4-8A', 1, 60, 8192, '1280x1024'),
    ('nvidia-229', 'GRID T4-16A', 1, 60, 16384, '1280x1024'),
    ('nvidia-230', 'GRID T4-1Q', 4, 60, 1024, '5120x2880'),
    ('nvidia-231', 'GRID T4-2Q', 4, 60, 2048, '7680x4320'),
    ('nvidia-232', 'GRID T4-4Q', 4, 60, 4096, '7680x4320'),
    ('nvidia-233', 'GRID T4-8Q', 4, 60, 8192, '7680x4320'),
    ('nvidia-234', 'GRID T4-16Q', 4, 60, 16384, '7680x4320'),
]
ARRIA10_INTERFACE_ID = '9926ab6d6c925a68aabca7d84c545738'
NLB0_AFU_ID = 'd8424dc4a4a3c413f89e433683f9040b'


class Tree:
    """Builds one sysfs root at ``root`` (emptied first)."""

    def __init__(self, root: str) -> None:
        self.root = root
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)

    def _write(self, rel: str, text: str) -> None:
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text + '\n' if text else '')

    def _link(self, rel: str, target_rel: str) -> None:
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        target = os.path.join(self.root, target_rel)
        os.symlink(os.path.relpath(target, os.path.dirname(path)), path)

    def pci(self, address: str, bridge: str, vendor: str, device: str,
            klass: str, subsys: tuple[str, str], driver: str,
            iommu_group: int, revision: str = '0xa1') -> str:
        """Add a function; return its real directory (relative)."""
        domain, bus = bridge.split(':')[:2]
        devdir = 'devices/pci%s:%s/%s/%s' % (domain, bus, bridge, address)
        for name, value in (('vendor', vendor), ('device', device),
                            ('class', klass), ('revision', revision),
                            ('subsystem_vendor', subsys[0]),
                            ('subsystem_device', subsys[1]),
                            ('numa_node', '0'), ('enable', '1')):
            self._write('%s/%s' % (devdir, name), value)
        self._link('bus/pci/devices/' + address, devdir)
        self._link('%s/driver' % devdir, 'bus/pci/drivers/' + driver)
        self._link('bus/pci/drivers/%s/%s' % (driver, address), devdir)
        group = 'kernel/iommu_groups/%d' % iommu_group
        self._link('%s/iommu_group' % devdir, group)
        self._link('%s/devices/%s' % (group, address), devdir)
        return devdir

    def sriov(self, pf_dir: str, vf_dirs: list[str], total: int) -> None:
        self._write(pf_dir + '/sriov_totalvfs', str(total))
        self._write(pf_dir + '/sriov_numvfs', str(len(vf_dirs)))
        for n, vf_dir in enumerate(vf_dirs):
            self._link('%s/virtfn%d' % (pf_dir, n), vf_dir)
            self._link(vf_dir + '/physfn', pf_dir)

    def mdev_types(self, devdir: str, types, created=None) -> None:
        """T4-style types; ``created`` is (type, uuid) of one mdev."""
        address = os.path.basename(devdir)
        self._link('class/mdev_bus/' + address, devdir)
        for type_id, name, heads, frl, fb, res in types:
            max_inst = 16384 // fb
            available = max_inst
            if created:
                available = max_inst - 1 if created[0] == type_id else 0
            base = '%s/mdev_supported_types/%s' % (devdir, type_id)
            self._write(base + '/name', name)
            self._write(base + '/available_instances', str(available))
            self._write(base + '/device_api', 'vfio-pci')
            self._write(base + '/create', '')
            self._write(base + '/description',
                        'num_heads=%d, frl_config=%d, framebuffer=%dM, '
                        'max_resolution=%s, max_instance=%d'
                        % (heads, frl, fb, res, max_inst))
        if created:
            type_id, uuid = created
            mdev = '%s/%s' % (devdir, uuid)
            self._write(mdev + '/remove', '')
            self._link(mdev + '/mdev_type',
                       '%s/mdev_supported_types/%s' % (devdir, type_id))
            self._link('%s/mdev_supported_types/%s/devices/%s'
                       % (devdir, type_id, uuid), mdev)
            self._link('bus/mdev/devices/' + uuid, mdev)

    def intel_fpga(self, devdir: str, dev_index: int, fme: bool,
                   port: bool) -> None:
        base = '%s/fpga/intel-fpga-dev.%d' % (devdir, dev_index)
        self._link('class/fpga/intel-fpga-dev.%d' % dev_index, base)
        if fme:
            fme_dir = '%s/intel-fpga-fme.%d' % (base, dev_index)
            self._write(fme_dir + '/pr/interface_id', ARRIA10_INTERFACE_ID)
            self._write(fme_dir + '/ports_num', '1')
            self._write(fme_dir + '/bitstream_id', '0x123000200000185')
        if port:
            self._write('%s/intel-fpga-port.%d/afu_id' % (base, dev_index),
                        NLB0_AFU_ID)


# --- real cards -------------------------------------------------------

def add_t4(tree: Tree, address: str, bridge: str, group: int,
           created=None) -> None:
    devdir = tree.pci(address, bridge, '0x10de', '0x1eb8', '0x030200',
                      ('0x10de', '0x12a2'), 'nvidia', group)
    tree.mdev_types(devdir, T4_VGPU_TYPES, created)


def add_a100(tree: Tree, num_vfs: int) -> None:
    bridge = '0000:3a:00.0'
    pf = tree.pci('0000:3b:00.0', bridge, '0x10de', '0x20f1', '0x030200',
                  ('0x10de', '0x145f'), 'nvidia', 60)
    vfs = [tree.pci('0000:3b:00.%d' % (4 + n), bridge, '0x10de', '0x20f1',
                    '0x030200', ('0x10de', '0x0000'), 'nvidia', 61 + n)
           for n in range(num_vfs)]
    tree.sriov(pf, vfs, total=16)


def add_arria10(tree: Tree, pf_address: str, bridge: str, dev_index: int,
                with_vf: bool) -> None:
    pf = tree.pci(pf_address, bridge, '0x8086', '0x09c4', '0x120000',
                  ('0x8086', '0x0000'), 'intel-fpga-pci', 70, '0x01')
    # With SR-IOV on, the card's only port moves from the PF to the VF.
    tree.intel_fpga(pf, dev_index, fme=True, port=not with_vf)
    if with_vf:
        vf_address = pf_address[:-1] + '1'
        vf = tree.pci(vf_address, bridge, '0x8086', '0x09c5', '0x120000',
                      ('0x8086', '0x0000'), 'intel-fpga-pci', 71, '0x01')
        tree.sriov(pf, [vf], total=1)
        tree.intel_fpga(vf, dev_index + 1, fme=False, port=True)
    else:
        tree.sriov(pf, [], total=1)


def add_u250(tree: Tree, slot: str, bridge: str) -> None:
    tree.pci(slot + '.0', bridge, '0x10ee', '0x5004', '0x120000',
             ('0x10ee', '0x000e'), 'xclmgmt', 80, '0x00')
    tree.pci(slot + '.1', bridge, '0x10ee', '0x5005', '0x120000',
             ('0x10ee', '0x000e'), 'xocl', 80, '0x00')


def add_unrelated(tree: Tree) -> None:
    """An ASPEED BMC VGA, an X710 port and a QAT: none ours."""
    tree.pci('0000:03:00.0', '0000:00:1c.0', '0x1a03', '0x2000', '0x030000',
             ('0x1a03', '0x2000'), 'ast', 20, '0x41')
    tree.pci('0000:18:00.0', '0000:17:00.0', '0x8086', '0x1572', '0x020000',
             ('0x8086', '0x0006'), 'i40e', 30, '0x01')
    tree.pci('0000:3d:00.0', '0000:3c:00.0', '0x8086', '0x37c8', '0x0b4000',
             ('0x8086', '0x0000'), 'c6xx', 40, '0x04')


# --- the kernel's part ------------------------------------------------

def _type_dir(root: str, address: str, mdev_type: str) -> str:
    return os.path.join(root, 'bus/pci/devices', address,
                        'mdev_supported_types', mdev_type)


def _add_available(type_dir: str, delta: int) -> None:
    path = os.path.join(type_dir, 'available_instances')
    with open(path) as f:
        value = int(f.read()) + delta
    with open(path, 'w') as f:
        f.write('%d\n' % value)


def kernel_create_mdev(root: str, address: str, mdev_type: str) -> str:
    """Do what the kernel does after a uuid is written to ``create``."""
    type_dir = _type_dir(root, address, mdev_type)
    with open(os.path.join(type_dir, 'create')) as f:
        uuid = f.read().strip()
    parent = os.path.realpath(os.path.join(root, 'bus/pci/devices', address))
    mdev = os.path.join(parent, uuid)
    os.makedirs(mdev)
    open(os.path.join(mdev, 'remove'), 'w').close()
    os.symlink(os.path.relpath(os.path.realpath(type_dir), mdev),
               os.path.join(mdev, 'mdev_type'))
    devices = os.path.join(type_dir, 'devices')
    os.makedirs(devices, exist_ok=True)
    os.symlink(os.path.relpath(mdev, os.path.realpath(devices)),
               os.path.join(devices, uuid))
    bus = os.path.join(root, 'bus/mdev/devices')
    os.makedirs(bus, exist_ok=True)
    os.symlink(os.path.relpath(mdev, bus), os.path.join(bus, uuid))
    _add_available(type_dir, -1)
    return uuid


def kernel_remove_mdev(root: str, uuid: str) -> None:
    """Do what the kernel does after ``1`` is written to ``remove``."""
    link = os.path.join(root, 'bus/mdev/devices', uuid)
    mdev = os.path.realpath(link)
    type_dir = os.path.realpath(os.path.join(mdev, 'mdev_type'))
    os.unlink(os.path.join(type_dir, 'devices', uuid))
    os.unlink(link)
    shutil.rmtree(mdev)
    _add_available(type_dir, +1)


def mdevs(root: str) -> list[str]:
    """The uuids of the mdevs that exist on a tree."""
    bus = os.path.join(root, 'bus/mdev/devices')
    return sorted(os.listdir(bus)) if os.path.isdir(bus) else []


class SimulatedSysfs(Sysfs):
    """A sysfs whose mdev writes take effect, as the kernel's would.

    ``fail_mdev_creation`` makes the kernel refuse new mdevs, as a
    GPU in a bad state does (writes to ``create`` fail with EIO), until
    ``repair``.
    """

    _refusing: str | None = None

    def fail_mdev_creation(self, reason: str = 'Input/output error') -> None:
        self._refusing = reason

    def repair(self) -> None:
        self._refusing = None

    def create_mdev(self, address: str, mdev_type: str, uuid: str) -> None:
        if self._refusing:
            raise SysfsError('cannot write %r to %s: %s' % (
                uuid, os.path.join(_type_dir(self.root, address, mdev_type),
                                   'create'), self._refusing))
        with sysfs_lib.MDEV_LOCK:
            super().create_mdev(address, mdev_type, uuid)
            kernel_create_mdev(self.root, address, mdev_type)

    def remove_mdev(self, uuid: str, address: str | None = None,
                    mdev_type: str | None = None) -> bool:
        with sysfs_lib.MDEV_LOCK:
            removed = super().remove_mdev(uuid, address, mdev_type)
            if removed:
                kernel_remove_mdev(self.root, uuid)
        return removed
