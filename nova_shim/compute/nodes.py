"""The compute nodes in Placement: one root provider per hypervisor
hostname that the compute service serves, under which Cyborg puts that
host's deployables."""

import uuid as uuidlib

from oslo_config import cfg

from nova_shim import scheduler


def compute_node_uuid(hostname: str) -> str:
    """A stable provider uuid for a hypervisor hostname (the same one
    cyborg-lite's all-in-one gives its simulated hosts)."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS,
                             'compute-node.' + hostname))


def register(conf: cfg.ConfigOpts, adapter,
                           hostnames: list[str]) -> dict[str, str]:
    """Ensure a root provider per hypervisor hostname; name -> uuid.

    A provider that already has the name (made by an earlier run, or
    by whoever set up Placement) is reused with its uuid.
    """
    nodes = {}
    for name in hostnames:
        resp = adapter.get('/resource_providers', params={'name': name},
                           microversion=scheduler.PROVIDER_VERSION)
        found = resp.json().get('resource_providers', []) \
            if resp.status_code == 200 else []
        rp_uuid = found[0]['uuid'] if found else compute_node_uuid(name)
        scheduler.ensure_compute_node(
            adapter, name=name, uuid=rp_uuid, vcpus=conf.compute.vcpus,
            memory_mb=conf.compute.memory_mb, disk_gb=conf.compute.disk_gb)
        nodes[name] = rp_uuid
    return nodes
