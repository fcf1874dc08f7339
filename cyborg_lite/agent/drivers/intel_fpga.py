"""Intel FPGA programmable acceleration cards (intel-fpga driver).

Each physical function of a known card is one device with one ``FPGA``
deployable. Its attach handles are the PF's SR-IOV virtual functions, or
the PF itself when no VF is enabled (with a VF on, the card's port, and
so its AFU, belongs to the VF). Traits name the vendor, the card, the PR
region (the FME's ``pr/interface_id``) and the loaded functions (each
port's ``afu_id``).
"""

from __future__ import annotations

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import PciDevice
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite import model

VENDOR_ID = '8086'
# PF product id -> card name used in the CUSTOM_FPGA_INTEL_<card> trait.
PF_PRODUCTS = {
    '09c4': 'PAC_ARRIA10',
    '0b2b': 'PAC_D5005',
    '0b30': 'PAC_N3000',
}
VF_PRODUCTS = {'09c5': '09c4', '0b2c': '0b2b', '0b31': '0b30'}


class IntelFPGADriver(base.Driver):
    """Discovers Intel PAC cards and runs the programming command."""

    name = 'intel_fpga'

    def discover(self) -> list[model.DriverDevice]:
        functions = self.sysfs.list_pci_devices()
        by_address = {pci.address: pci for pci in functions}
        devices = []
        for pci in functions:
            if (pci.vendor == VENDOR_ID and pci.device in PF_PRODUCTS
                    and not pci.is_vf):
                with self.skipping_broken(pci.address):
                    devices.append(self._device(pci, by_address))
        return devices

    def _device(self, pf: PciDevice,
                by_address: dict[str, PciDevice]) -> model.DriverDevice:
        vfs = []
        for address in pf.virtfns:
            if address not in by_address:
                # With a VF on, the card's port is on the VF: without it
                # the card cannot be described.
                raise SysfsError('its VF %s cannot be read' % address)
            vfs.append(by_address[address])
        vfs = [vf for vf in vfs if VF_PRODUCTS.get(vf.device) == pf.device]
        handle_addresses = [vf.address for vf in vfs] or [pf.address]
        afu_ids = []
        for address in [pf.address] + [vf.address for vf in vfs]:
            afu_ids.extend(self.sysfs.fpga_afu_ids(address))
        regions = self.sysfs.fpga_interface_ids(pf.address)
        traits = ['CUSTOM_FPGA_INTEL',
                  'CUSTOM_FPGA_INTEL_%s' % PF_PRODUCTS[pf.device]]
        traits += ['CUSTOM_FPGA_REGION_INTEL_%s' % base.trait_part(r)
                   for r in regions]
        traits += ['CUSTOM_FPGA_FUNCTION_ID_INTEL_%s' % base.trait_part(a)
                   for a in afu_ids]
        deployable = model.DriverDeployable(
            name=self.deployable_name(pf.address),
            num_accelerators=len(handle_addresses),
            driver_name=self.name,
            attributes=base.attributes('FPGA', traits),
            attach_handles=tuple(base.pci_handle(a)
                                 for a in handle_addresses))
        return model.DriverDevice(
            type=model.DeviceType.FPGA.value,
            vendor=VENDOR_ID,
            model=PF_PRODUCTS[pf.device],
            controlpath_type=model.ControlPathType.PCI.value,
            controlpath_info=model.canonical_json(
                model.pci_address_info(pf.address)),
            std_board_info=model.canonical_json({'product_id': pf.device}),
            deployables=(deployable,))

    def program(self, controlpath_info: str, bitstream_path: str) -> None:
        address = self.require_pci_device(controlpath_info)
        base.run_program_command(self.conf, address, bitstream_path)
