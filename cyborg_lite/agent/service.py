"""The agent service of one host: an RPC server for bind-time host work
and a loop that reports the host's devices to the conductor.

Before anything else, when ``[placement]`` is configured, the agent
looks in Placement for its compute-node resource provider (named
``[agent] resource_provider_name``, by default the FQDN, falling back to
``[DEFAULT] host``): its deployables become children of that provider.
It looks ``[agent] resource_provider_startup_retries`` more times with
exponential back-off and refuses to start when the provider is missing.

The first report goes out right after the RPC server starts; later ones
every ``[agent] report_interval`` seconds plus a random jitter, so that a
fleet restarted at once does not report in step.
"""

import logging
import random
import threading
import time

import oslo_messaging

from cyborg_lite import context
from cyborg_lite import model
from cyborg_lite import process
from cyborg_lite import rpc
from cyborg_lite.agent import discover
from cyborg_lite.agent import manager
from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.conductor import placement
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import rpcapi as conductor_rpcapi

LOG = logging.getLogger(__name__)


class ComputeNodeMissing(RuntimeError):
    """The agent's compute-node resource provider is not in Placement."""


def find_compute_node(conf, names, client=None, sleep=time.sleep):
    """The compute-node provider named by one of ``names``, looked for
    ``[agent] resource_provider_startup_retries`` more times with
    back-off; raises ComputeNodeMissing."""
    client = client or placement.get_client(conf)
    retries = conf.agent.resource_provider_startup_retries
    delay = conf.agent.resource_provider_startup_delay
    problem = None
    for attempt in range(retries + 1):
        if attempt:
            sleep(delay * 2 ** (attempt - 1))
        try:
            for name in names:
                rp = client.get_provider_by_name(name)
                if rp is not None:
                    return rp
            problem = 'no resource provider is named %s' % ' or '.join(
                repr(n) for n in names)
        except placement.PlacementError as exc:
            problem = str(exc)
        LOG.warning('Compute-node provider not found (try %d of %d): %s',
                    attempt + 1, retries + 1, problem)
    raise ComputeNodeMissing(
        'Refusing to start: Placement has no compute-node resource '
        'provider for this host (%s). Start nova-compute on this host '
        'first, or set [agent] resource_provider_name to the name of its '
        'compute-node provider.' % problem)


# Seconds between tries while no conductor has answered a report.
RETRY_INTERVAL = 5


class AgentService:
    def __init__(self, conf, transport, hostname=None, sysfs=None,
                 drivers=None):
        self.conf = conf
        self.transport = transport
        self.hostname = hostname or base.host_name(conf)
        self.sysfs = sysfs or Sysfs.from_conf(conf)
        self.drivers = (drivers if drivers is not None else
                        base.load_drivers(conf, self.sysfs, self.hostname))
        self.conductor = conductor_rpcapi.ConductorAPI(conf, transport)
        self.manager = manager.AgentManager(conf, self.sysfs, self.drivers)
        # Driver name -> the devices it found at its last complete pass.
        self._last_found = {}
        self._server = None
        self._stop = threading.Event()
        self._thread = None

    def discover(self):
        """One pass of the drivers: broken devices are logged and left
        out; a driver that fails reports its last devices again."""
        return discover.run_drivers(self.drivers, self.sysfs,
                                    self._last_found)

    def report(self):
        """Discover and send one report; returns the conductor's summary."""
        devices = self.discover()
        return self.conductor.report_devices(
            context.RequestContext.admin(), self.hostname,
            [d.to_dict() for d in devices], model.report_digest(devices))

    def check_placement(self):
        """Find this host's compute-node provider; skipped when
        ``[placement]`` is not configured."""
        if not placement_mirror.configured(self.conf):
            return None
        names = list(dict.fromkeys(n for n in (self.hostname, self.conf.host)
                                   if n))
        rp = find_compute_node(self.conf, names)
        if rp['name'] != self.hostname:
            LOG.warning('Compute-node provider found by [DEFAULT] host %s, '
                        'not by %s', rp['name'], self.hostname)
            self.hostname = rp['name']
        return rp

    def start(self, report_loop=True):
        self.check_placement()
        self._server = rpc.get_server(self.transport, self.conf.agent.topic,
                                      self.hostname, [self.manager])
        self._server.start()
        self._reported = self._try_report()
        if report_loop:
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name='report-%s' % self.hostname)
            self._thread.start()
        LOG.info('Agent %s started with drivers %s', self.hostname,
                 ', '.join(d.name for d in self.drivers))

    def _try_report(self):
        """One report; False when no conductor answered (none started
        yet, or the broker is away), so that the loop tries again soon."""
        try:
            self.report()
            return True
        except oslo_messaging.MessagingException as exc:
            LOG.warning('Report of %s got no answer (%s); retrying',
                        self.hostname, type(exc).__name__)
        except Exception:
            LOG.exception('Report of %s failed', self.hostname)
        return False

    def _next_wait(self):
        interval = self.conf.agent.report_interval
        if not self._reported:
            interval = min(interval, RETRY_INTERVAL)
        return interval * (1 + random.uniform(0,
                                              self.conf.agent.report_jitter))

    def _loop(self):
        while not self._stop.wait(self._next_wait()):
            self._reported = self._try_report()

    def stop(self):
        self._stop.set()
        if self._server is not None:
            self._server.stop()
            self._server.wait()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)


def run(conf):
    """Run one agent until SIGTERM or SIGINT (``cyborg-lite-agent``)."""
    return process.serve_until_signalled(
        AgentService(conf, rpc.get_transport(conf)))


__all__ = ['AgentService', 'run', 'discover']
