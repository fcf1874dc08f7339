"""What the all-in-one needs besides the services: Placement and hosts.

Part of the composition root (``cyborg_lite.allinone``): it imports
``placement_stub`` and ``nova_shim``, which the rest of ``cyborg_lite``
does not.

* ``EmbeddedPlacement`` runs ``placement_stub`` in-process on a
  loopback port, its SQLite file under the all-in-one's state directory,
  and says when it serves anonymous callers.
* ``register_compute_nodes`` creates each simulated host's
  compute-node provider, as nova-compute would, before its agent starts.
* ``host_conf`` builds one host's own ConfigOpts, so that hosts can
  run different drivers on different sysfs trees.
* ``simulated_host`` builds a simulated host of a given kind: a sysfs
  tree of real cards whose mdev writes take effect, and its agent options.
"""

import os

from keystoneauth1 import loading as ks_loading

from cyborg_lite import conf as cl_conf
from cyborg_lite.agent import simulation
from cyborg_lite.conf import agent as agent_conf
from nova_shim.compute.nodes import compute_node_uuid
from nova_shim import scheduler
from placement_stub import auth as placement_auth
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

    def __init__(self, state_dir, host='127.0.0.1', port=0):
        connection = 'sqlite:///' + os.path.join(state_dir,
                                                 'placement.sqlite')
        self._fixture = placement_fixture.PlacementFixture(
            connection=connection, host=host, port=port)

    @property
    def endpoint(self):
        return self._fixture.endpoint

    @property
    def conf(self):
        return self._fixture.conf

    def start(self):
        self._fixture.start()
        return self

    def warn_if_open(self, stream=None):
        """placement_stub's open-access WARNING line for this stub
        (printed on ``stream``, stderr by default), or None."""
        return placement_auth.warn_if_open(self.conf, self.endpoint,
                                           stream=stream)

    def stop(self):
        self._fixture.stop()


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


# Simulated host kinds: the fake driver, or real cards' sysfs layouts.
T4_VGPU_TYPE = 'nvidia-223'   # GRID T4-2B: 8 vGPUs per T4
HOST_KINDS = ('fake', 't4-vgpu', 'a100')


def simulated_host(kind, root):
    """``(agent overrides, sysfs)`` of a simulated host of ``kind``;
    the sysfs tree is built under ``root``. ``fake`` needs neither."""
    if kind == 'fake':
        return {}, None
    tree = simulation.Tree(root)
    overrides = {('agent', 'enabled_drivers'): ['nvidia_gpu'],
                 ('agent', 'sysfs_root'): root}
    if kind == 't4-vgpu':
        simulation.add_t4(tree, '0000:af:00.0', '0000:ae:00.0', 90)
        overrides[('gpu_devices', 'enabled_vgpu_types')] = [T4_VGPU_TYPE]
    elif kind == 'a100':
        simulation.add_a100(tree, num_vfs=0)
    else:
        raise ValueError('unknown simulated host kind %r; known: %s'
                         % (kind, ', '.join(HOST_KINDS)))
    return overrides, simulation.SimulatedSysfs(root)
