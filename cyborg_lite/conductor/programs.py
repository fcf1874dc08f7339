"""Programming an FPGA deployable through the API (``PATCH
/v2/deployables/{uuid}/program``).

A programming lasts as long as the agent lets its tool run (``[agent]
fpga_program_timeout``, minutes), so the API does not wait on one RPC
call for it: ``ProgramService.start`` checks the deployable, records
the request (``cyborg_lite.db.programs``) and programs in a thread
of its own, and the API reads the request with ``status`` until it
ends. ``program`` is the whole programming in one call, as RPC API
1.0 served it, for API servers that are not upgraded yet.

Binds program their FPGAs themselves (``cyborg_lite.conductor.arqs``).
"""

import json
import logging
import threading

from cyborg_lite import exception
from cyborg_lite import states
from cyborg_lite.db import inventory
from cyborg_lite.db import programs

LOG = logging.getLogger(__name__)

# The resource classes of deployables that load a bitstream.
PROGRAMMABLE_RESOURCE_CLASSES = frozenset({'FPGA'})


def resource_class(deployable):
    """The ``rc`` attribute of a deployable (API-shaped), or None."""
    for attribute in json.loads(deployable['attributes_list']):
        if 'rc' in attribute:
            return attribute['rc']
    return None


class ProgramService:
    """The API's programmings, on one conductor."""

    def __init__(self, db, agents):
        self._db = db
        self._agents = agents

    def _host(self, uuid):
        """The host row of a deployable that can be programmed. A
        deployable of another resource class (a GPU) is refused before
        its agent is asked: no driver of it can ever load a bitstream,
        so that is the caller's mistake (409), not the host's (502)."""
        dep = inventory.deployable_get(self._db, uuid)
        kind = resource_class(dep)
        if kind not in PROGRAMMABLE_RESOURCE_CLASSES:
            raise exception.DeployableNotProgrammable(
                ident=uuid, kind=kind or 'deployable of no resource class')
        return inventory.deployable_by_rp(self._db, dep['rp_uuid'])

    def _run(self, host, image_uuid):
        """Have the agent program the deployable, then record its
        bitstream."""
        try:
            self._agents.program(host['hostname'], host, image_uuid)
        except exception.CyborgLiteException:
            raise
        except Exception as exc:
            raise exception.AgentError(host=host['hostname'],
                                       reason=str(exc).split('\n')[0])
        inventory.set_bitstream(self._db, host['id'], image_uuid)

    def program(self, uuid, image_uuid):
        """Program the deployable and answer it (RPC API 1.0)."""
        self._run(self._host(uuid), image_uuid)
        return inventory.deployable_get(self._db, uuid)

    def start(self, uuid, image_uuid, request_id):
        """Start request ``request_id``: program the deployable in the
        background; its state (``programming`` when this call started
        it). A request started before is not started again (a repeat of
        this call), and one the API gave up (``abandoned``) never is."""
        host = self._host(uuid)
        state, started = programs.start(self._db, request_id, uuid,
                                        image_uuid)
        if not started:
            LOG.info('Program request %s is %s already: not starting it',
                     request_id, state)
            return state
        LOG.info('Program request %s: programming deployable %s with '
                 'bitstream %s on %s', request_id, uuid, image_uuid,
                 host['hostname'])
        threading.Thread(target=self._run_request,
                         args=(request_id, host, image_uuid), daemon=True,
                         name='program-%s' % request_id).start()
        return state

    def _run_request(self, request_id, host, image_uuid):
        done = threading.Event()
        beating = threading.Thread(target=self._beat,
                                   args=(request_id, done), daemon=True,
                                   name='program-beat-%s' % request_id)
        beating.start()
        error = None
        try:
            self._run(host, image_uuid)
        except exception.CyborgLiteException as exc:
            error = exc.message
        except Exception:
            LOG.exception('Program request %s failed', request_id)
            error = 'An unexpected error occurred; see the conductor log.'
        finally:
            done.set()
        beating.join()
        try:
            programs.finish(self._db, request_id, error)
        except Exception:
            # The API takes the request for lost when its beats stop.
            LOG.exception('Program request %s: could not record its end',
                          request_id)
            return
        LOG.info('Program request %s %s%s', request_id,
                 'failed: ' if error else 'done', error or '')

    def _beat(self, request_id, done):
        while not done.wait(states.PROGRAM_BEAT_INTERVAL):
            try:
                programs.beat(self._db, request_id)
            except Exception:
                LOG.exception('Program request %s: could not mark it as '
                              'in progress', request_id)

    def status(self, request_id):
        """``{state, beats, error, deployable_uuid}`` of the request."""
        found = programs.get(self._db, request_id)
        if found is None:
            raise exception.ProgramRequestNotFound(request_id=request_id)
        return found

    def abandon(self, request_id):
        """Give the request up unless a conductor started it; its state
        after that (``abandoned`` when given up)."""
        return programs.abandon(self._db, request_id)

    def forget_old(self):
        return programs.forget_old(self._db)
