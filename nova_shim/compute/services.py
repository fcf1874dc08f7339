"""Compute services: one per hypervisor hostname, as Nova's ``os-services``.

nova_shim's compute service may serve several hypervisor hostnames (the
all-in-one's simulated hosts); each is a compute host of its own to the
scheduler and to the API, with a ``services`` row. A service is up while
this process runs, unless an operator forced it down; the scheduler
never offers a node whose service is down or disabled. Evacuation needs
the instance's service to be down, as in Nova, where an operator forces
down the service of a host that failed (``openstack compute service set
--down HOST nova-compute``).

The API's handlers are in ``nova_shim.api.handlers.services``.
"""

import uuid as uuidlib

from nova_shim.compute.deps import ComputeDeps

BINARY = 'nova-compute'


def service_uuid(host: str) -> str:
    """A stable id for the compute service of a hypervisor hostname."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, 'nova-compute.' + host))


def register(deps: ComputeDeps) -> None:
    """A service row for each node this process serves."""
    for host in deps.nodes:
        deps.db.ensure_service(host, service_uuid(host))


def unavailable_hosts(deps: ComputeDeps) -> set[str]:
    """The hosts the scheduler must not offer: down or disabled."""
    return {s.host for s in deps.db.list_services()
            if s.disabled or not s.is_up}


def is_up(deps: ComputeDeps, host: str) -> bool:
    found = [s for s in deps.db.list_services() if s.host == host]
    return bool(found) and found[0].is_up
