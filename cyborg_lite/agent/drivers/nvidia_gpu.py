"""NVIDIA GPUs, whole (``PGPU``) or split into vGPUs (``VGPU``).

A GPU is an NVIDIA (``10de``) PCI function of class display VGA
(``0300xx``) or 3D controller (``0302xx``). It becomes one device with
one deployable:

* ``PGPU`` with one PCI attach handle, for passthrough of the whole GPU;
* ``VGPU`` when the GPU offers a vGPU type enabled for it: one MDEV
  handle per instance the type allows (free plus already created).

Which type a GPU gets: ``[gpu_devices] enabled_vgpu_types`` lists the
types, and ``[vgpu_<type>] device_addresses`` the GPUs of each. A GPU
that no type lists gets the first enabled type whose
``device_addresses`` is empty, if any, and if it offers it (a GPU that
does not is a PGPU). A GPU that ``device_addresses`` names but that does
not offer the type (yet: NVIDIA's types appear once ``nvidia-vgpud``
runs) is not read this pass: the agent reports it as it read it last,
or not at all, never as a whole GPU that Nova could pass through while
it is meant for vGPUs.

MDEV handles are numbered (``vgpu_mark`` ``<type>_<n>``), not named by
mdev uuid: the handle set must not change when an mdev is created, or
every bind would change the report. The conductor gives each handle its
uuid and the agent creates the mdev under that uuid at bind time.
"""

from __future__ import annotations

import logging

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import MdevType
from cyborg_lite.agent.sysfs import PciDevice
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite.conf import agent as agent_conf
from cyborg_lite import model

LOG = logging.getLogger(__name__)

VENDOR_ID = '10de'
CONTROLLERS = {'0300': 'VGA compatible controller',
               '0302': '3D controller'}
# Names as lspci shows them, for the model field; others show the id.
PRODUCT_NAMES = {
    '1db4': 'GV100GL [Tesla V100 PCIe 16GB]',
    '1eb8': 'TU104GL [Tesla T4]',
    '20b5': 'GA100 [A100 PCIe 80GB]',
    '20f1': 'GA100 [A100 PCIe 40GB]',
    '2236': 'GA102GL [A10]',
    '25b6': 'GA107GL [A2 / A16]',
    '26b9': 'AD102GL [L40S]',
    '27b8': 'AD104GL [L4]',
}
VGPU_NAME_PREFIXES = ('GRID ', 'NVIDIA ')


def vgpu_trait_name(mdev_name: str) -> str:
    """``GRID T4-1B`` -> ``T4_1B``; ``NVIDIA A100-4C`` -> ``A100_4C``;
    ValueError when nothing of the name is left for a trait."""
    name = mdev_name
    for prefix in VGPU_NAME_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    part = base.trait_part(name)
    if not part:
        raise ValueError('vGPU type name %r makes no trait' % mdev_name)
    return part


class NvidiaGPUDriver(base.Driver):
    """Discovers NVIDIA GPUs and their vGPU instances."""

    name = 'nvidia_gpu'

    def __init__(self, conf, sysfs, hostname=None) -> None:
        super().__init__(conf, sysfs, hostname)
        agent_conf.register_vgpu_opts(
            conf, conf.gpu_devices.enabled_vgpu_types)

    def discover(self) -> list[model.DriverDevice]:
        types_by_address, default_type = self._vgpu_type_map()
        devices = []
        for pci in self.sysfs.list_pci_devices():
            if not self._is_gpu(pci):
                continue
            vgpu_type = types_by_address.get(pci.address, default_type)
            with self.skipping_broken(pci.address):
                devices.append(self._device(
                    pci, vgpu_type, pci.address in types_by_address))
        return devices

    def _is_gpu(self, pci: PciDevice) -> bool:
        if pci.vendor != VENDOR_ID or pci.class_code[:4] not in CONTROLLERS:
            return False
        if pci.is_vf and self.conf.gpu_devices.filter_sriov_vfs:
            LOG.debug('skipping SR-IOV VF %s', pci.address)
            return False
        return True

    def _vgpu_type_map(self) -> tuple[dict[str, str], str | None]:
        """GPU address -> enabled type, and the type for unlisted GPUs."""
        by_address: dict[str, str] = {}
        default_type = None
        for vgpu_type in self.conf.gpu_devices.enabled_vgpu_types:
            group = getattr(self.conf,
                            agent_conf.VGPU_GROUP_PREFIX + vgpu_type)
            for address in group.device_addresses:
                if address in by_address:
                    LOG.warning('GPU %s is listed for vGPU types %s and %s;'
                                ' using %s', address, by_address[address],
                                vgpu_type, by_address[address])
                    continue
                by_address[address] = vgpu_type
            if not group.device_addresses and default_type is None:
                default_type = vgpu_type
        return by_address, default_type

    def _device(self, pci: PciDevice, vgpu_type: str | None,
                listed: bool = False) -> model.DriverDevice:
        """The GPU as a device; ``listed``: ``device_addresses`` names
        it for ``vgpu_type``."""
        mdev_type = None
        if vgpu_type is not None:
            mdev_type = self.sysfs.mdev_type(pci.address, vgpu_type)
            if mdev_type is None and listed:
                raise SysfsError(
                    'GPU %s is listed for vGPU type %s, which it does not '
                    'offer (is nvidia-vgpud running?)'
                    % (pci.address, vgpu_type))
            if mdev_type is None:
                LOG.warning('GPU %s does not offer vGPU type %s; reporting'
                            ' it as a whole GPU', pci.address, vgpu_type)
        if mdev_type is None:
            deployables = (self._pgpu_deployable(pci),)
        else:
            deployables = self._vgpu_deployables(pci, mdev_type)
        return model.DriverDevice(
            type=model.DeviceType.GPU.value,
            vendor=VENDOR_ID,
            model=PRODUCT_NAMES.get(pci.device, pci.device),
            controlpath_type=model.ControlPathType.PCI.value,
            controlpath_info=model.canonical_json(
                model.pci_address_info(pci.address)),
            std_board_info=model.canonical_json({
                'controller': CONTROLLERS[pci.class_code[:4]],
                'product_id': pci.device}),
            deployables=deployables)

    def _product_trait(self, pci: PciDevice) -> str:
        return 'CUSTOM_NVIDIA_%s' % pci.device.upper()

    def _pgpu_deployable(self, pci: PciDevice) -> model.DriverDeployable:
        return model.DriverDeployable(
            name=self.deployable_name(pci.address),
            num_accelerators=1,
            driver_name=self.name,
            attributes=base.attributes(
                'PGPU', ['OWNER_CYBORG', self._product_trait(pci)]),
            attach_handles=(base.pci_handle(pci.address),))

    def _vgpu_deployables(self, pci: PciDevice, mdev_type: MdevType
                          ) -> tuple[model.DriverDeployable, ...]:
        total = mdev_type.available_instances + len(mdev_type.created)
        if total == 0:
            # Another type's mdevs occupy the GPU; Placement takes no
            # inventory of zero, so the device has no deployable.
            LOG.warning('GPU %s has no room for vGPU type %s',
                        pci.address, mdev_type.type_id)
            return ()
        trait = '%s_%s' % (self._product_trait(pci),
                           vgpu_trait_name(mdev_type.name))
        address_info = model.pci_address_info(pci.address)
        handles = tuple(
            model.DriverAttachHandle(
                attach_type=model.AttachType.MDEV.value,
                attach_info=model.canonical_json(dict(
                    address_info, asked_type=mdev_type.type_id,
                    vgpu_mark='%s_%d' % (mdev_type.type_id, n))))
            for n in range(total))
        return (model.DriverDeployable(
            name=self.deployable_name(pci.address),
            num_accelerators=total,
            driver_name=self.name,
            attributes=base.attributes('VGPU', ['OWNER_CYBORG', trait]),
            attach_handles=handles),)
