"""Data shared by every layer: enums and the driver report dataclasses.

Dataclasses here hold data and do no I/O. They cross process boundaries as
plain dicts (``to_dict`` / ``from_dict``), because the RPC layer carries
plain dicts, not versioned objects.

A driver's ``discover()`` returns a list of ``DriverDevice``. The agent
sends ``[d.to_dict() for d in devices]`` to the conductor, which rebuilds the
dataclasses and diffs them against the database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import enum
import json


class DeviceType(str, enum.Enum):
    """The ``devices.type`` column."""

    GPU = 'GPU'
    FPGA = 'FPGA'
    AICHIP = 'AICHIP'
    QAT = 'QAT'
    NIC = 'NIC'
    SSD = 'SSD'


class DeviceStatus(str, enum.Enum):
    """The ``devices.status`` column (exposed from API 2.3)."""

    ENABLED = 'enabled'
    MAINTAINING = 'maintaining'


class AttachType(str, enum.Enum):
    """How a guest gets an attach handle: a PCI function or an mdev."""

    PCI = 'PCI'
    MDEV = 'MDEV'
    TEST_PCI = 'TEST_PCI'


class ControlPathType(str, enum.Enum):
    PCI = 'PCI'


def pci_address_info(address: str) -> dict[str, str]:
    """Split ``dddd:bb:dd.f`` into the dict that attach handles carry.

    >>> pci_address_info('0000:af:00.1')
    {'bus': 'af', 'device': '00', 'domain': '0000', 'function': '1'}
    """
    domain, bus, rest = address.split(':')
    device, function = rest.split('.')
    return {'bus': bus, 'device': device, 'domain': domain,
            'function': function}


def canonical_json(value) -> str:
    """JSON with sorted keys and no spaces: the stored form of infos."""
    return json.dumps(value, sort_keys=True, separators=(',', ':'))


@dataclasses.dataclass(frozen=True)
class DriverAttachHandle:
    """One assignable unit of a deployable: a PCI function or an mdev."""

    attach_type: str
    attach_info: str  # canonical JSON of the address (and mdev type)
    in_use: bool = False

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> DriverAttachHandle:
        return cls(attach_type=data['attach_type'],
                   attach_info=data['attach_info'],
                   in_use=bool(data.get('in_use', False)))


@dataclasses.dataclass(frozen=True)
class DriverAttribute:
    """A key/value of a deployable: ``rc`` is its resource class,
    ``trait<N>`` its traits."""

    key: str
    value: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> DriverAttribute:
        return cls(key=data['key'], value=data['value'])


@dataclasses.dataclass(frozen=True)
class DriverDeployable:
    """What Placement sees as one child resource provider."""

    name: str
    num_accelerators: int
    driver_name: str
    attributes: tuple[DriverAttribute, ...] = ()
    attach_handles: tuple[DriverAttachHandle, ...] = ()

    @property
    def resource_class(self) -> str | None:
        for attr in self.attributes:
            if attr.key == 'rc':
                return attr.value
        return None

    @property
    def traits(self) -> list[str]:
        return sorted(a.value for a in self.attributes
                      if a.key.startswith('trait'))

    def to_dict(self) -> dict:
        return {'name': self.name,
                'num_accelerators': self.num_accelerators,
                'driver_name': self.driver_name,
                'attributes': [a.to_dict() for a in self.attributes],
                'attach_handles': [h.to_dict() for h in self.attach_handles]}

    @classmethod
    def from_dict(cls, data: dict) -> DriverDeployable:
        return cls(
            name=data['name'],
            num_accelerators=int(data['num_accelerators']),
            driver_name=data['driver_name'],
            attributes=tuple(DriverAttribute.from_dict(a)
                             for a in data.get('attributes', ())),
            attach_handles=tuple(DriverAttachHandle.from_dict(h)
                                 for h in data.get('attach_handles', ())))


@dataclasses.dataclass(frozen=True)
class DriverDevice:
    """One physical device as a driver found it.

    ``controlpath_info`` (canonical JSON of the PCI address) is the device's
    identity when the conductor diffs a report against the database.
    """

    type: str
    vendor: str
    model: str
    controlpath_type: str
    controlpath_info: str
    std_board_info: str = '{}'
    vendor_board_info: str = ''
    deployables: tuple[DriverDeployable, ...] = ()

    def to_dict(self) -> dict:
        return {'type': self.type,
                'vendor': self.vendor,
                'model': self.model,
                'controlpath_type': self.controlpath_type,
                'controlpath_info': self.controlpath_info,
                'std_board_info': self.std_board_info,
                'vendor_board_info': self.vendor_board_info,
                'deployables': [d.to_dict() for d in self.deployables]}

    @classmethod
    def from_dict(cls, data: dict) -> DriverDevice:
        return cls(
            type=data['type'],
            vendor=data['vendor'],
            model=data['model'],
            controlpath_type=data.get('controlpath_type', 'PCI'),
            controlpath_info=data['controlpath_info'],
            std_board_info=data.get('std_board_info', '{}'),
            vendor_board_info=data.get('vendor_board_info', ''),
            deployables=tuple(DriverDeployable.from_dict(d)
                              for d in data.get('deployables', ())))


def report_digest(devices: list[DriverDevice]) -> str:
    """A stable digest of a host's report, so that an unchanged host costs
    the conductor one indexed read."""

    payload = canonical_json(sorted((d.to_dict() for d in devices),
                                    key=lambda d: d['controlpath_info']))
    return hashlib.sha256(payload.encode()).hexdigest()
