"""Everything in one process, on embedded defaults.

``AllInOne`` runs the API (the built-in server), one conductor and
one agent per simulated host, talking over oslo.messaging's in-process
transport (``cyborg_lite.local_transport``) and storing data in a
SQLite file. It also runs ``placement_stub`` on a loopback port (unless
``[placement]`` is configured by ``overrides`` or ``placement=False``),
registers each simulated host's compute-node provider there, and lets the
conductor mirror the deployables into it. It backs ``cyborg-lite-allinone``
and the functional tests.

This subpackage is the composition root of the repository: the one place
that imports ``cyborg_lite`` together with its peers ``placement_stub``
and ``nova_shim`` (``cyborg_lite.allinone.hosts``,
``cyborg_lite.allinone.compute``). The rest of ``cyborg_lite``, its
console scripts included, reaches the peers only through ``AllInOne``
(``tests/unit/cyborg_lite/test_layering.py`` checks it).

Each agent has its own ConfigOpts: ``host_overrides`` maps a host (its
0-based index or its name) to options of that host only, e.g. another
driver on a fixture sysfs tree::

    AllInOne(state_dir, hosts=2, host_overrides={1: {
        ('agent', 'enabled_drivers'): ['nvidia_gpu'],
        ('agent', 'sysfs_root'): '/tmp/t4_vgpu',
        ('gpu_devices', 'enabled_vgpu_types'): ['nvidia-223']}})

``host_kinds`` builds simulated hosts instead (``HOST_KINDS``:
``fake``, ``t4-vgpu``, ``a100``; see
``cyborg_lite.allinone.hosts.simulated_host``), and ``compute=True``
adds nova_shim's compute service, which serves every simulated host as a
hypervisor and receives the bind events, an Image API
(``cyborg_lite.allinone.images``) for its images, and the Identity
version documents that some clients check
(``cyborg_lite.allinone.identity``). Each server listens on its port
(``api_port``, ``compute_port``, ``placement_port``, ``image_port``,
``identity_port``; 0 picks a free one), and
``AllInOne.write_clouds_yaml`` writes a ``clouds.yaml`` that the
OpenStack clients use.
"""

import logging
import os
import uuid

from cyborg_lite import conf as cl_conf
from cyborg_lite import local_transport
from cyborg_lite import privsep
from cyborg_lite import rpc
from cyborg_lite.allinone import clouds
from cyborg_lite.allinone import hosts as host_lib
from cyborg_lite.allinone import identity as identity_lib
from cyborg_lite.allinone import images as images_lib
from cyborg_lite.agent import service as agent_service
from cyborg_lite.api import app as api_app
from cyborg_lite.api import auth as api_auth
from cyborg_lite.api import errors as api_errors
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import service as conductor_service
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from lite_common.wsgi_server import WSGIServer

LOG = logging.getLogger(__name__)

IN_PROCESS_TRANSPORT = local_transport.TRANSPORT_URL
HOST_KINDS = host_lib.HOST_KINDS


def default_overrides(state_dir, unique_topics=False):
    """The embedded defaults: SQLite under ``state_dir``, in-process
    messaging, noauth."""
    overrides = {
        (None, 'state_path'): state_dir,
        (None, 'transport_url'): IN_PROCESS_TRANSPORT,
        ('database', 'connection'): 'sqlite:///' + os.path.join(
            state_dir, 'cyborg_lite.sqlite'),
        ('api', 'auth_strategy'): 'noauth',
        ('agent', 'enabled_drivers'): ['fake'],
    }
    if unique_topics:
        # Several stacks may share one process (tests): keep apart.
        suffix = uuid.uuid4().hex[:8]
        overrides[('conductor', 'topic')] = 'cyborg-lite-conductor-' + suffix
        overrides[('agent', 'topic')] = 'cyborg-lite-agent-' + suffix
    return overrides


def host_names(count):
    return ['compute%d.cyborg-lite.test' % i for i in range(1, count + 1)]


class AllInOne:
    """The API, a conductor and N agents; ``start``, ``stop``."""

    def __init__(self, state_dir, api_port=0, hosts=1, overrides=None,
                 unique_topics=False, api_host='127.0.0.1',
                 host_overrides=None, placement=True, host_kinds=None,
                 compute=False, compute_port=0, placement_port=0,
                 image_port=0, identity_port=0):
        os.makedirs(state_dir, exist_ok=True)
        self.state_dir = state_dir
        options = default_overrides(state_dir, unique_topics)
        options.update(overrides or {})
        self._options = options
        self.conf = cl_conf.build_conf(overrides=options)
        self.hostnames = host_names(len(host_kinds) if host_kinds
                                    else hosts)
        self._host_overrides = {
            (self.hostnames[k] if isinstance(k, int) else k): v
            for k, v in (host_overrides or {}).items()}
        self._host_sysfs = {}
        for hostname, kind in zip(self.hostnames, host_kinds or (),
                                  strict=False):
            extra, sysfs = host_lib.simulated_host(
                kind, os.path.join(state_dir, 'sysfs', hostname))
            self._host_overrides.setdefault(hostname, {}).update(extra)
            self._host_sysfs[hostname] = sysfs
        self.compute = None
        self._with_compute = compute
        self.compute_port = compute_port
        self.images = self.identity = None
        if compute:
            self.images = WSGIServer(
                images_lib.ImageAPI(os.path.join(state_dir, 'images')),
                api_host, image_port, max_body_size=images_lib.MAX_IMAGE_SIZE)
            self.identity = WSGIServer(identity_lib.application, api_host,
                                       identity_port)
        self.placement = None
        if placement and not placement_mirror.configured(
                self.conf):
            self.placement = host_lib.EmbeddedPlacement(
                state_dir, host=api_host, port=placement_port)
        self.api_host = api_host
        self.api_port = api_port
        self.db = None
        self.transport = None
        self.conductor = None
        self.agents = []
        self.api_server = None

    @property
    def url(self):
        return self.api_server.url

    @property
    def placement_url(self):
        """Placement's endpoint, or None when there is none."""
        if self.placement is not None:
            return self.placement.endpoint
        return self.conf.placement.endpoint_override

    def host_conf(self, hostname):
        """The ConfigOpts of one host's agent."""
        return host_lib.host_conf(self._options,
                                  self._host_overrides.get(hostname))

    def start_agent(self, hostname):
        agent = agent_service.AgentService(
            self.host_conf(hostname), self.transport, hostname=hostname,
            sysfs=self._host_sysfs.get(hostname))
        agent.start()
        self.agents.append(agent)
        return agent

    def start(self):
        # The simulated hosts' trees belong to this process: their
        # privileged writes need no daemon.
        privsep.run_in_process()
        if self.placement is not None:
            self.placement.start()
            placement = host_lib.placement_overrides(
                self.placement.endpoint)
            self._options.update(placement)
            for (group, name), value in placement.items():
                self.conf.set_override(name, value, group=group)
        if self._with_compute:
            self._start_compute()
        elif placement_mirror.configured(self.conf):
            host_lib.register_compute_nodes(self.conf, self.hostnames)
        self.db = engine.Database(self.conf)
        migration.upgrade(self.db)
        self.transport = rpc.get_transport(self.conf)
        self.conductor = conductor_service.ConductorService(
            self.conf, self.transport, db=self.db)
        self.conductor.start()
        for hostname in self.hostnames:
            self.start_agent(hostname)
        app = api_app.setup_app(self.conf, self.transport)
        self.api_server = WSGIServer(
            app, self.api_host, self.api_port, error_body=api_errors.envelope,
            max_body_size=self.conf.api.max_request_body_size).start()
        if self.compute is not None:
            self.compute.use_cyborg(self.url)
        LOG.info('cyborg-lite API at %s', self.url)
        return self

    def _start_compute(self):
        """nova_shim's compute registers the compute nodes itself."""
        from cyborg_lite.allinone import compute as compute_lib
        self.images.start()
        self.identity.start()
        self.compute = compute_lib.EmbeddedCompute(
            self.state_dir, self.hostnames, self.placement_url,
            api_host=self.api_host, api_port=self.compute_port,
            image_url=self.images.url).start()
        for (group, name), value in self.compute.nova_overrides().items():
            self._options[(group, name)] = value
            self.conf.set_override(name, value, group=group)

    def warn_if_open(self, stream=None):
        """Log and print on ``stream`` (stderr by default) one WARNING
        line for each started server that serves anonymous callers: the
        API, the embedded Placement, then the compute API; return the
        lines."""
        lines = [api_auth.warn_if_open(self.conf, self.url, stream=stream)]
        if self.placement is not None:
            lines.append(self.placement.warn_if_open(stream=stream))
        if self.compute is not None:
            lines.append(self.compute.warn_if_open(stream=stream))
        return [line for line in lines if line is not None]

    def write_clouds_yaml(self):
        """``clouds.yaml`` in the state directory, with one cloud
        (``cyborg-lite``) of these services; its path."""
        return clouds.write(self.state_dir, clouds.cloud(
            self.url, self.compute.url if self.compute else None,
            self.placement_url, self.images.url if self.images else None,
            self.identity.url if self.identity else None))

    def sysfs_root(self, hostname):
        """The sysfs tree of a simulated host, or None."""
        sysfs = self._host_sysfs.get(hostname)
        return sysfs.root if sysfs is not None else None

    def simulated_sysfs(self, hostname):
        """The SimulatedSysfs of a simulated host (to inject a hardware
        fault), or None."""
        return self._host_sysfs.get(hostname)

    def stop(self):
        if self.compute is not None:
            self.compute.stop()
        if self.images is not None:
            self.images.stop()
        if self.identity is not None:
            self.identity.stop()
        if self.api_server is not None:
            self.api_server.stop()
        for agent in self.agents:
            agent.stop()
        if self.conductor is not None:
            self.conductor.stop()
        if self.transport is not None:
            self.transport.cleanup()
        if self.db is not None:
            self.db.dispose()
        if self.placement is not None:
            self.placement.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
