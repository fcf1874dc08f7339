"""What the all-in-one needs besides the services: Placement and hosts.

* :class:`EmbeddedPlacement` runs ``placement_stub`` in-process on a
  loopback port, its SQLite file under the all-in-one's state directory.
* :func:`register_compute_nodes` creates each simulated host's
  compute-node provider, as nova-compute would, before its agent starts.
* :func:`host_conf` builds one host's own ConfigOpts, so that hosts can
  run different drivers on different sysfs trees.
"""

import os
import uuid

from keystoneauth1 import loading as ks_loading

from cyborg_lite import conf as cl_conf
from cyborg_lite.conf import agent as agent_conf
from nova_shim import scheduler
from placement_stub import fixture as placement_fixture

# What each simulated compute node offers besides its accelerators.
COMPUTE_NODE = {'vcpus': 32, 'memory_mb': 131072, 'disk_gb': 1024}


def placement_overrides(endpoint):
    """``[placement]`` options for a noauth Placement at ``endpoint``
    (the stub takes a request without ``X-Roles`` as admin)."""
    return {('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): endpoint}


class EmbeddedPlacement:
    """placement_stub in a thread; ``endpoint`` once started."""

    def __init__(self, state_dir, host='127.0.0.1'):
        connection = 'sqlite:///' + os.path.join(state_dir,
                                                 'placement.sqlite')
        self._fixture = placement_fixture.PlacementFixture(
            connection=connection, host=host)

    @property
    def endpoint(self):
        return self._fixture.endpoint

    def start(self):
        self._fixture.start()
        return self

    def stop(self):
        self._fixture.stop()


def compute_node_uuid(hostname):
    """A simulated compute node's provider uuid, stable across restarts."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, 'compute-node.' + hostname))


def register_compute_nodes(conf, hostnames):
    """Create (or update) the compute-node provider of each host."""
    auth = ks_loading.load_auth_from_conf_options(conf, 'placement')
    session = ks_loading.load_session_from_conf_options(conf, 'placement',
                                                        auth=auth)
    adapter = ks_loading.load_adapter_from_conf_options(
        conf, 'placement', session=session, auth=auth, raise_exc=False)
    for hostname in hostnames:
        scheduler.ensure_compute_node(adapter, name=hostname,
                                      uuid=compute_node_uuid(hostname),
                                      **COMPUTE_NODE)


def host_conf(overrides, host_overrides=None):
    """One host's ConfigOpts: ``overrides`` then ``host_overrides``.

    ``[vgpu_<type>]`` groups exist only once ``[gpu_devices]
    enabled_vgpu_types`` is known, so they are registered before their
    options are set.
    """
    options = dict(overrides)
    options.update(host_overrides or {})
    vgpu = {k: v for k, v in options.items()
            if k[0] and k[0].startswith(agent_conf.VGPU_GROUP_PREFIX)}
    conf = cl_conf.build_conf(overrides={
        k: v for k, v in options.items() if k not in vgpu})
    agent_conf.register_vgpu_opts(conf, conf.gpu_devices.enabled_vgpu_types)
    for (group, name), value in vgpu.items():
        conf.set_override(name, value, group=group)
    return conf
