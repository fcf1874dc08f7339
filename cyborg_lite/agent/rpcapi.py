"""Client side of the agent RPC API: host work at bind time.

API version history:

* 1.0 - Initial version: create_mdev, remove_mdev, program.

Each call goes to one host's agent (``server=<hostname>``), the hostname
Nova put in the bind.
"""

from cyborg_lite import context
from cyborg_lite import rpc

RPC_API_VERSION = '1.0'
# Seconds without a heartbeat from an agent at work after which a
# programming call counts as lost with its agent.
PROGRAM_MONITOR_TIMEOUT = 30
# The same for an mdev's creation or removal, a write or two to sysfs:
# a bind to a host whose agent is gone fails within seconds, and so
# does every call the API sent in one message with it (a message is
# answered when its slowest call is), instead of at the RPC timeout.
MDEV_MONITOR_TIMEOUT = 5


class AgentAPI:
    def __init__(self, conf, transport, timeout=None):
        self.client = rpc.get_client(transport, conf.agent.topic,
                                     RPC_API_VERSION, timeout=timeout)
        # A programming may take as long as the agent lets its command
        # run ([agent] fpga_program_timeout), which is far longer than
        # an RPC call's default timeout; the agent's heartbeats say that
        # it is still at work.
        self._program_options = {
            'timeout': conf.agent.fpga_program_timeout +
            PROGRAM_MONITOR_TIMEOUT,
            'call_monitor_timeout': PROGRAM_MONITOR_TIMEOUT}
        self._mdev_options = {'call_monitor_timeout': MDEV_MONITOR_TIMEOUT}

    def _call(self, host, method, version='1.0', options=None, **kwargs):
        cctxt = self.client.prepare(server=host, version=version,
                                    **(options or {}))
        return cctxt.call(context.RequestContext.admin(), method, **kwargs)

    def create_mdev(self, host, handle):
        """``handle``: ``{uuid, attach_type, attach_info}``."""
        return self._call(host, 'create_mdev', options=self._mdev_options,
                          handle=handle)

    def remove_mdev(self, host, handle):
        return self._call(host, 'remove_mdev', options=self._mdev_options,
                          handle=handle)

    def program(self, host, deployable, bitstream_id):
        return self._call(host, 'program', options=self._program_options,
                          deployable=deployable, bitstream_id=bitstream_id)
