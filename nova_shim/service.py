"""The compute service: instance DB, libvirt, Placement nodes, API,
composed for one ``nova-shim-compute`` process.

``ComputeService`` can run several times in one process (tests,
the all-in-one). ``start`` opens the one libvirt connection the
service keeps for its life (``test:///default`` forgets its domains when
the last connection closes), registers a compute-node provider per
hypervisor hostname in Placement, and serves the API. Authentication
that cannot work (``[api] auth_strategy`` without what it needs) stops
it before any of that: ``AuthConfigError``.
"""

import logging
import socket

from oslo_config import cfg

from nova_shim.api import app as compute_api
from nova_shim.api.wsgi import APIServer
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute.events import InstanceEvents
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute import nodes as compute_nodes
from nova_shim.compute import services
from nova_shim.db import api as db_api
from nova_shim.db import migration
from nova_shim import scheduler
from nova_shim.virt.libvirt import LibvirtDriver

LOG = logging.getLogger(__name__)


class SchemaNotCurrent(Exception):
    """The database's schema is not the one this code serves."""

    def __init__(self, current: str | None, head: str) -> None:
        super().__init__(
            'the database is at migration %s, not %s: run nova-shim-manage '
            '--config-file <nova-shim.conf> db sync first' % (current, head))


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
        database = db_api.Database(db_api.connection_url(self.conf))
        self._check_schema(database)
        driver = LibvirtDriver(self.conf)
        driver.init_host()
        placement = scheduler.get_placement_adapter(self.conf)
        hostnames = self.conf.compute.hypervisor_hostnames or [self.host]
        nodes = compute_nodes.register(self.conf, placement, hostnames)
        self.deps = ComputeDeps(self.conf, database, driver, InstanceEvents(),
                                placement, self.host, nodes)
        services.register(self.deps)
        self.manager = ComputeManager(self.deps)
        self.manager.seed_flavors()
        self.server = APIServer(compute_api.build_app(self.manager,
                                                      self.conf),
                                self.conf.compute.api_host,
                                self.conf.compute.api_port).start()
        LOG.info('nova_shim compute %s serving %s at %s', self.host,
                 ', '.join(hostnames), self.url)
        return self

    def _check_schema(self, database: db_api.Database) -> None:
        """Migrate with ``[database] sync_on_startup``; else refuse a
        schema that is not the newest (SchemaNotCurrent)."""
        if self.conf.database.sync_on_startup:
            migration.upgrade(database.engine)
            return
        current = migration.version(database.engine)
        if current != migration.head():
            database.dispose()
            raise SchemaNotCurrent(current, migration.head())

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
