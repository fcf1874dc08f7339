"""The data nova_shim's layers hand each other: an instance, a compute
service and a flavor, as rows of its database read them. Data only: no
I/O.
"""

import dataclasses
import datetime


@dataclasses.dataclass
class Instance:
    """One instance row; ``flavor`` is the flavor's dict (``vcpus``,
    ``memory_mb``, ``disk_gb``, ``extra_specs``)."""

    uuid: str
    name: str
    project_id: str | None
    user_id: str | None
    flavor: dict
    host: str | None
    node: str | None
    compute_node_uuid: str | None
    vm_state: str
    task_state: str | None
    power_state: int
    arq_uuids: list[str]
    allocation_claimed: bool
    fault: str | None
    created_at: datetime.datetime
    updated_at: datetime.datetime
    retry: dict | None = None
    reservation_id: str | None = None
    image_ref: str | None = None

    @property
    def device_profile(self) -> str | None:
        return self.flavor.get('extra_specs', {}).get('accel:device_profile')


@dataclasses.dataclass
class Service:
    """A compute node as a compute service (Nova's ``os-services``)."""

    host: str
    uuid: str
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    updated_at: datetime.datetime

    @property
    def is_up(self) -> bool:
        """Up unless forced down: the service runs in this process."""
        return not self.forced_down


@dataclasses.dataclass
class Migration:
    """A cold migration or resize of an instance (Nova's ``migrations``
    row). ``uuid`` is the Placement consumer that holds the source
    node's allocation until the move is confirmed or reverted;
    ``old_flavor`` and ``new_flavor`` are the instance's flavor dicts
    before and after; ``source_arqs`` the ARQs it had on the source,
    each with the device provider it was bound to (``{arq uuid: rp
    uuid}``), which a revert binds there again."""

    id: int
    uuid: str
    instance_uuid: str
    migration_type: str
    status: str
    source_compute: str | None
    source_node: str | None
    dest_compute: str | None
    dest_node: str | None
    old_flavor: dict
    new_flavor: dict
    source_arqs: dict[str, str]
    old_vm_state: str
    project_id: str | None
    user_id: str | None
    created_at: datetime.datetime
    updated_at: datetime.datetime

    @property
    def is_resize(self) -> bool:
        return self.migration_type == 'resize'

    @property
    def source_arq_uuids(self) -> list[str]:
        return list(self.source_arqs)


# The flavor extra spec that asks for accelerators: the name of a Cyborg
# device profile.
DEVICE_PROFILE_SPEC = 'accel:device_profile'


@dataclasses.dataclass
class Flavor:
    """A flavor, as Nova's: ``disk_gb`` is its root disk; ``flavorid``
    the id the API shows (Nova's ``flavorid``)."""

    name: str
    vcpus: int
    memory_mb: int
    disk_gb: int
    extra_specs: dict[str, str] = dataclasses.field(default_factory=dict)
    flavorid: str | None = None
    ephemeral_gb: int = 0
    swap: int = 0
    rxtx_factor: float = 1.0
    is_public: bool = True
    disabled: bool = False
    description: str | None = None

    @property
    def device_profile(self) -> str | None:
        return self.extra_specs.get(DEVICE_PROFILE_SPEC) or None

    def snapshot(self) -> dict:
        """What an instance keeps of the flavor it was built with."""
        return {'id': self.flavorid or self.name, 'name': self.name,
                'vcpus': self.vcpus, 'memory_mb': self.memory_mb,
                'disk_gb': self.disk_gb, 'ephemeral_gb': self.ephemeral_gb,
                'swap': self.swap, 'extra_specs': dict(self.extra_specs)}
