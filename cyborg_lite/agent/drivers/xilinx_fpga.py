"""Xilinx Alveo cards (XRT's xclmgmt and xocl drivers).

An Alveo card shows two physical functions in one PCI slot: the
management PF (bound to ``xclmgmt``, used to program the shell) and the
user PF (bound to ``xocl``, where workloads run). Both make one device
with one ``FPGA`` deployable of one accelerator and two PCI attach
handles, so a guest gets the whole card.
"""

from __future__ import annotations

import logging

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import PciDevice
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite import model

LOG = logging.getLogger(__name__)

VENDOR_ID = '10ee'
PROCESSING_ACCELERATOR_CLASS = '1200'
MGMT_DRIVER = 'xclmgmt'
USER_DRIVER = 'xocl'
# Management PF product id -> card; the user PF is the next id.
MGMT_PRODUCTS = {
    '5000': 'U200',
    '5004': 'U250',
    '500c': 'U280',
    '5020': 'U50',
    '5048': 'U55C',
}


def _slot(address: str) -> str:
    return address.rsplit('.', 1)[0]


def _is_mgmt(pci: PciDevice) -> bool:
    if pci.driver in (MGMT_DRIVER, USER_DRIVER):
        return pci.driver == MGMT_DRIVER
    if pci.device in MGMT_PRODUCTS:
        return True
    return pci.address.endswith('.0')


class XilinxFPGADriver(base.Driver):
    """Discovers Alveo cards and runs the programming command."""

    name = 'xilinx_fpga'

    def discover(self) -> list[model.DriverDevice]:
        slots: dict[str, list[PciDevice]] = {}
        readable = self.sysfs.list_pci_devices()
        for pci in readable:
            if (pci.vendor == VENDOR_ID and pci.class_code[:4]
                    == PROCESSING_ACCELERATOR_CLASS):
                slots.setdefault(_slot(pci.address), []).append(pci)
        # Functions listed on the bus that could not be read (and were
        # logged): a card with one of them is not described whole.
        unreadable = (set(self.sysfs.list_pci_addresses())
                      - {pci.address for pci in readable})
        devices = []
        for slot, functions in slots.items():
            mgmt = [f for f in functions if _is_mgmt(f)]
            if not mgmt:
                LOG.warning('Xilinx card in slot %s has no management PF;'
                            ' skipped', slot)
                continue
            with self.skipping_broken(mgmt[0].address):
                broken = sorted(a for a in unreadable if _slot(a) == slot)
                if broken:
                    raise SysfsError('its function %s cannot be read'
                                     % ', '.join(broken))
                devices.append(self._device(mgmt[0], functions))
        return devices

    def _device(self, mgmt: PciDevice,
                functions: list[PciDevice]) -> model.DriverDevice:
        traits = ['CUSTOM_FPGA_XILINX',
                  'CUSTOM_FPGA_PRODUCT_ID_%s' % mgmt.device.upper()]
        deployable = model.DriverDeployable(
            name=self.deployable_name(mgmt.address),
            num_accelerators=1,
            driver_name=self.name,
            attributes=base.attributes('FPGA', traits),
            attach_handles=tuple(base.pci_handle(f.address)
                                 for f in functions))
        return model.DriverDevice(
            type=model.DeviceType.FPGA.value,
            vendor=VENDOR_ID,
            model=MGMT_PRODUCTS.get(mgmt.device, mgmt.device),
            controlpath_type=model.ControlPathType.PCI.value,
            controlpath_info=model.canonical_json(
                model.pci_address_info(mgmt.address)),
            std_board_info=model.canonical_json(
                {'product_id': mgmt.device}),
            deployables=(deployable,))

    def program(self, controlpath_info: str, bitstream_path: str) -> None:
        address = self.require_pci_device(controlpath_info)
        base.run_program_command(self.conf, address, bitstream_path)
