"""The compute service: instance DB, libvirt, Placement nodes, API.

:class:`ComputeService` can run several times in one process (tests,
the all-in-one). :meth:`start` opens the one libvirt connection the
service keeps for its life (``test:///default`` forgets its domains when
the last connection closes), registers a compute-node provider per
hypervisor hostname in Placement, and serves the API. Authentication
that cannot work (``[api] auth_strategy`` without what it needs) stops
it before any of that: :class:`~lite_common.auth.AuthConfigError`.
"""

import logging
import socket
import uuid as uuidlib

from oslo_config import cfg

from nova_shim.compute import api as compute_api
from nova_shim.compute import db
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute.events import InstanceEvents
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute import services
from nova_shim.compute.wsgi import APIServer
from nova_shim import scheduler
from nova_shim.virt.libvirt import LibvirtDriver

LOG = logging.getLogger(__name__)


def compute_node_uuid(hostname: str) -> str:
    """A stable provider uuid for a hypervisor hostname (the same one
    cyborg-lite's all-in-one gives its simulated hosts)."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS,
                             'compute-node.' + hostname))


def register_compute_nodes(conf: cfg.ConfigOpts, adapter,
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


class ComputeService:
    """Everything one ``nova-shim-compute`` runs."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf
        self.host = conf.host or socket.getfqdn()
        self.deps: ComputeDeps | None = None
        self.manager: ComputeManager | None = None
        self.server: APIServer | None = None

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> 'ComputeService':
        # The manager comes later; authentication that cannot work
        # refuses now, before the database, libvirt and Placement.
        compute_api.build_app(None, self.conf)
        database = db.Database(db.connection_url(self.conf))
        database.create_schema()
        driver = LibvirtDriver(self.conf)
        driver.init_host()
        placement = scheduler.get_placement_adapter(self.conf)
        hostnames = self.conf.compute.hypervisor_hostnames or [self.host]
        nodes = register_compute_nodes(self.conf, placement, hostnames)
        self.deps = ComputeDeps(self.conf, database, driver, InstanceEvents(),
                                placement, self.host, nodes)
        services.register(self.deps)
        self.manager = ComputeManager(self.deps)
        self.server = APIServer(compute_api.build_app(self.manager,
                                                      self.conf),
                                self.conf.compute.api_host,
                                self.conf.compute.api_port).start()
        LOG.info('nova_shim compute %s serving %s at %s', self.host,
                 ', '.join(hostnames), self.url)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if self.manager is not None:
            self.manager.wait_for_background(timeout=10)
        if self.deps is not None:
            self.deps.driver.cleanup_host()
            self.deps.db.dispose()

    def __enter__(self) -> 'ComputeService':
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
