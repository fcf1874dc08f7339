"""The Nova side of the all-in-one: nova_shim's compute service.

It serves every simulated host as a hypervisor (libvirt's
``test:///default`` by default), registers their compute-node providers
in the embedded Placement, and receives cyborg-lite's
``accelerator-request-bound`` events on its API. Part of the composition
root (``cyborg_lite.allinone``); ``AllInOne``
imports it only when ``compute=True``.
"""

import os

from nova_shim.api import auth as compute_auth
from nova_shim import conf as shim_conf
from nova_shim import service as compute_service

API_VERSION_PATH = '/v2.1'


class EmbeddedCompute:
    def __init__(self, state_dir, hostnames, placement_url,
                 api_host='127.0.0.1', api_port=0, image_url=None):
        self.conf = shim_conf.build_conf(overrides={
            (None, 'state_path'): os.path.join(state_dir, 'nova-shim'),
            (None, 'host'): 'nova-shim-compute',
            # On loopback, as the all-in-one's other servers; start-up
            # says so (warn_if_open).
            ('api', 'auth_strategy'): 'noauth2',
            # Its own database: it migrates it itself.
            ('database', 'sync_on_startup'): True,
            ('compute', 'hypervisor_hostnames'): hostnames,
            ('compute', 'api_host'): api_host,
            ('compute', 'api_port'): api_port,
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): placement_url,
            ('cyborg', 'auth_type'): 'none',
            ('service_user', 'send_service_user_token'): True,
        })
        if image_url:
            self.conf.set_override('auth_type', 'none', group='glance')
            self.conf.set_override('endpoint_override', image_url,
                                   group='glance')
        self.service = compute_service.ComputeService(self.conf)

    @property
    def url(self):
        """The compute API, as a Nova endpoint (with ``/v2.1``)."""
        return self.service.url + API_VERSION_PATH

    def start(self):
        self.service.start()
        return self

    def use_cyborg(self, cyborg_url):
        """Point the compute at the cyborg-lite API once it serves."""
        self.conf.set_override('endpoint_override', cyborg_url + '/v2',
                               group='cyborg')

    def nova_overrides(self):
        """cyborg-lite's ``[nova]`` options for these events."""
        return {('nova', 'auth_type'): 'none',
                ('nova', 'endpoint_override'): self.url}

    def warn_if_open(self, stream=None):
        """The compute API's WARNING line that it is open (or None)."""
        return compute_auth.warn_if_open(self.conf, self.service.url,
                                         stream=stream)

    def stop(self):
        self.service.stop()
