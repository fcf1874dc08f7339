"""Client side of the agent RPC API: host work at bind time.

API version history:

* 1.0 - Initial version: create_mdev, remove_mdev, program.

Each call goes to one host's agent (``server=<hostname>``), the hostname
Nova put in the bind.
"""

from cyborg_lite import context
from cyborg_lite import rpc

RPC_API_VERSION = '1.0'


class AgentAPI:
    def __init__(self, conf, transport, timeout=None):
        self.client = rpc.get_client(transport, conf.agent.topic,
                                     RPC_API_VERSION, timeout=timeout)

    def _call(self, host, method, version='1.0', **kwargs):
        cctxt = self.client.prepare(server=host, version=version)
        return cctxt.call(context.RequestContext.admin(), method, **kwargs)

    def create_mdev(self, host, handle):
        """``handle``: ``{uuid, attach_type, attach_info}``."""
        return self._call(host, 'create_mdev', handle=handle)

    def remove_mdev(self, host, handle):
        return self._call(host, 'remove_mdev', handle=handle)

    def program(self, host, deployable, bitstream_id):
        return self._call(host, 'program', deployable=deployable,
                          bitstream_id=bitstream_id)
