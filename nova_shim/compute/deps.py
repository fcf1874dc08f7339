"""What the compute operations work with, in one small holder."""

import dataclasses

from keystoneauth1 import adapter as ks_adapter
from oslo_config import cfg

from nova_shim.compute.events import InstanceEvents
from nova_shim.compute.locks import InstanceLocks
from nova_shim.db.api import Database
from nova_shim.virt.libvirt import LibvirtDriver


@dataclasses.dataclass
class ComputeDeps:
    """The config, instance DB, hypervisor driver, event registry,
    Placement adapter and instance locks of one compute service."""

    conf: cfg.ConfigOpts
    db: Database
    driver: LibvirtDriver
    events: InstanceEvents
    placement: ks_adapter.Adapter
    host: str
    # hypervisor hostname -> compute-node provider uuid
    nodes: dict[str, str] = dataclasses.field(default_factory=dict)
    locks: InstanceLocks = dataclasses.field(default_factory=InstanceLocks)
