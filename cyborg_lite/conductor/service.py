"""The conductor service: an RPC server plus the sweep that takes over
binds whose conductor was lost.

``ConductorService`` can run many times in one process (the
all-in-one, the tests), each with its own ConfigOpts, database handle and
RPC server. Start-up work (the first sweep) runs after the RPC server
starts, never in a constructor. When ``[placement]`` is configured
(``auth_type`` or ``endpoint_override`` set) reports are mirrored into
Placement by a
``PlacementMirror``.
"""

import concurrent.futures
import logging
import socket
import threading

from cyborg_lite.agent import rpcapi as agent_rpcapi
from cyborg_lite.conductor import arqs
from cyborg_lite.conductor import manager
from cyborg_lite.conductor import nova
from cyborg_lite.conductor import placement
from cyborg_lite.conductor import placement_mirror
from cyborg_lite.conductor import programs
from cyborg_lite.conductor import reports
from cyborg_lite.conductor import rpcapi
from cyborg_lite import rpc
from cyborg_lite.db import engine
from cyborg_lite.db import services

LOG = logging.getLogger(__name__)

# Threads that run the calls of call_batch messages beside the RPC
# executor's thread, which runs each message's first call.
BATCH_THREADS = 16


class ConductorService:
    def __init__(self, conf, transport, db=None, mirror=None,
                 server_name=None):
        self.conf = conf
        self.transport = transport
        self.db = db or engine.Database(conf)
        self.notifier = nova.NovaNotifier(conf)
        self.agents = agent_rpcapi.AgentAPI(conf, transport)
        if mirror is None and placement_mirror.configured(conf):
            mirror = placement_mirror.PlacementMirror(
                placement.get_client(conf))
        self.mirror = mirror
        self.reports = reports.ReportService(self.db, mirror)
        self.arqs = arqs.ArqService(
            conf, self.db, self.notifier, self.agents,
            on_purged=self.reports.deployables_purged)
        self._batch_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=BATCH_THREADS, thread_name_prefix='batched-call')
        self.programs = programs.ProgramService(self.db, self.agents)
        self.manager = manager.ConductorManager(self.db, self.arqs,
                                                self.reports,
                                                self._batch_pool,
                                                self.programs,
                                                conf.conductor
                                                .service_down_time)
        self._server_name = server_name or conf.host or socket.getfqdn()
        self._server = None
        self._stop = threading.Event()
        self._sweeper = None
        self._recorder = None

    def start(self):
        self.notifier.start()
        # Recorded before it answers, so that a conductor that answers
        # conductor_versions finds itself.
        self._record()
        self._server = rpc.get_server(self.transport,
                                      self.conf.conductor.topic,
                                      self._server_name, [self.manager])
        self._server.start()
        self._sweeper = threading.Thread(target=self._sweep_loop,
                                         daemon=True, name='arq-sweep')
        self._sweeper.start()
        self._recorder = threading.Thread(target=self._record_loop,
                                          daemon=True,
                                          name='service-record')
        self._recorder.start()
        LOG.info('Conductor %s listening on topic %s', self._server_name,
                 self.conf.conductor.topic)

    def _sweep_loop(self):
        while not self._stop.is_set():
            try:
                self.arqs.sweep()
            except Exception:
                LOG.exception('Sweep for stuck binds failed')
            try:
                self.programs.forget_old()
            except Exception:
                LOG.exception('Forgetting old program requests failed')
            self._stop.wait(self.conf.conductor.sweep_interval)

    def _record_loop(self):
        """Record this conductor and its RPC API version in the services
        table now and every ``[conductor] report_interval`` (see
        ``cyborg_lite.db.services``)."""
        while not self._stop.wait(self.conf.conductor.report_interval):
            self._record()

    def _record(self):
        try:
            services.record(self.db, self._server_name, services.CONDUCTOR,
                            rpcapi.RPC_API_VERSION)
        except Exception:
            LOG.exception('Recording conductor %s in the services table '
                          'failed', self._server_name)

    def stop(self):
        self._stop.set()
        if self._server is not None:
            self._server.stop()
            self._server.wait()
            self._server = None
        # No bind starts now; those that wait for an agent's programming
        # go to the next sweep rather than fail after bind_timeout.
        self.arqs.leave_host_work()
        self._batch_pool.shutdown(wait=False)
        for thread in (self._sweeper, self._recorder):
            if thread is not None:
                thread.join(timeout=5)
        self.notifier.stop()
