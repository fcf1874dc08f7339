"""A driver with made-up devices, for demos, the all-in-one and tests.

It reads no sysfs. Its devices come from ``[agent] fake_devices`` (a
JSON list) or from the constructor; by default one FPGA with
``[agent] fake_fpga_handles`` attach handles and one GPU. Attach handles
are PCI-shaped, so a guest gets ``<hostdev>`` entries for them: handle
``n`` (1-based) of a device at ``dddd:bb:00.0`` is ``dddd:bb:<n//8>.<n%8>``,
the numbering upstream's fake driver uses for its TEST_PCI handles. Give
each simulated host its own ``address`` values to keep them apart.
"""

from __future__ import annotations

import json

from cyborg_lite.agent.drivers import base
from cyborg_lite import model

DEFAULT_VENDOR = '0xABCD'
KINDS = {  # type -> (resource class, default trait, default model)
    'FPGA': ('FPGA', 'CUSTOM_FAKE_DEVICE', 'FakeFPGA'),
    'GPU': ('PGPU', 'CUSTOM_FAKE_GPU', 'FakeGPU'),
}


def default_specs(fpga_handles: int) -> list[dict]:
    return [{'type': 'FPGA', 'address': '0000:0c:00.0',
             'handles': fpga_handles},
            {'type': 'GPU', 'address': '0000:0d:00.0', 'handles': 1}]


def handle_addresses(address: str, count: int) -> list[str]:
    """The PCI addresses of a fake device's ``count`` handles."""
    info = model.pci_address_info(address)
    if count == 1:
        return [address]
    return ['%s:%s:%02x.%d' % (info['domain'], info['bus'], n // 8, n % 8)
            for n in range(1, count + 1)]


class FakeDriver(base.Driver):
    """Reports configured fake devices; programming always succeeds."""

    name = 'fake'

    def __init__(self, conf, sysfs, hostname=None,
                 devices: list[dict] | None = None) -> None:
        super().__init__(conf, sysfs, hostname)
        if devices is None and conf.agent.fake_devices:
            devices = json.loads(conf.agent.fake_devices)
        if devices is None:
            devices = default_specs(conf.agent.fake_fpga_handles)
        for spec in devices:
            if spec.get('type') not in KINDS or 'address' not in spec:
                raise base.DriverError(
                    'fake device %r needs "address" and a "type" of %s'
                    % (spec, ', '.join(KINDS)))
        self.specs = devices
        self.programmed: dict[str, str] = {}

    def discover(self) -> list[model.DriverDevice]:
        return [self._device(spec) for spec in self.specs]

    def _device(self, spec: dict) -> model.DriverDevice:
        rc, trait, default_model = KINDS[spec['type']]
        address = spec['address']
        count = int(spec.get('handles', 1))
        deployables = ()
        if count > 0:
            deployables = (model.DriverDeployable(
                name=self.deployable_name(address),
                num_accelerators=count,
                driver_name=self.name,
                attributes=base.attributes(
                    spec.get('rc', rc), spec.get('traits', [trait])),
                attach_handles=tuple(
                    base.pci_handle(a)
                    for a in handle_addresses(address, count))),)
        return model.DriverDevice(
            type=spec['type'],
            vendor=spec.get('vendor', DEFAULT_VENDOR),
            model=spec.get('model', default_model),
            controlpath_type=model.ControlPathType.PCI.value,
            controlpath_info=model.canonical_json(
                model.pci_address_info(address)),
            std_board_info=model.canonical_json({'product_id': 'fake'}),
            deployables=deployables)

    def program(self, controlpath_info: str, bitstream_path: str) -> None:
        """Record the bitstream; run the program command if one is set."""
        address = base.pci_address(controlpath_info)
        if address not in {s['address'] for s in self.specs}:
            raise base.ProgramError('no fake device %s' % address)
        if self.conf.agent.fpga_program_command:
            base.run_program_command(self.conf, address, bitstream_path)
        self.programmed[address] = bitstream_path
