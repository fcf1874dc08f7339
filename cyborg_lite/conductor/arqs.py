"""Accelerator requests: create, list, bind, unbind, delete, and the
sweep that takes over binds whose conductor was lost.

Binds are compare-and-swaps (the guide's architecture page): the ARQ
moves to BindStarted and takes an attach handle by compare-and-swap in one
transaction. Most binds end Bound in that same transaction. A vGPU bind
first asks the host's agent to create the mdev, and an FPGA bind whose
profile names a bitstream the deployable does not carry programs it in
the background; those finish in a second step. Nova hears of every
resolved ARQ through ``NovaNotifier``.
"""

import logging
import threading

from oslo_utils import timeutils

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite import model
from cyborg_lite import states
from cyborg_lite.db import api as db_api
from cyborg_lite.db import binding
from cyborg_lite.db import inventory
from cyborg_lite.db import reports

LOG = logging.getLogger(__name__)

class ArqService:
    """ARQ work of one conductor."""

    def __init__(self, conf, db, notifier, agents, on_purged=None):
        self._conf = conf
        self._db = db
        self._notifier = notifier
        self._agents = agents
        # Called with the names of purged deployables (their providers go).
        self._on_purged = on_purged
        # {ARQ uuid: handle id} of the FPGA programmings this conductor
        # waits for, and whether it is leaving them (see leave_host_work).
        self._programming = {}
        self._programming_lock = threading.Lock()
        self._leaving = threading.Event()

    # --- create and read ----------------------------------------------

    def create(self, ctx, device_profile_name, idempotency_key=None):
        arqs = db_api.arq_create(self._db, device_profile_name, None,
                                 ctx.owner_project,
                                 idempotency_key=idempotency_key)
        LOG.info('Created %d ARQ(s) from device profile %s', len(arqs),
                 device_profile_name)
        return arqs

    def list(self, ctx, instance_uuid=None, bind_state=None):
        arqs = db_api.arq_list(self._db, project_id=ctx.scope_project,
                               instance_uuid=instance_uuid)
        if bind_state != 'resolved':
            return arqs
        if instance_uuid is not None:
            if any(a['state'] not in states.RESOLVED for a in arqs):
                raise exception.ARQsUnresolved(instance=instance_uuid)
            return arqs
        return [a for a in arqs if a['state'] in states.RESOLVED]

    def get(self, ctx, uuid):
        return db_api.arq_get(self._db, uuid, project_id=ctx.scope_project)

    # --- bind ---------------------------------------------------------

    def bind(self, ctx, bindings, repeat=False):
        """Bind ARQs: ``{arq_uuid: {hostname, device_rp_uuid,
        instance_uuid[, project_id]}}``. Raises after trying them all if
        any bind failed or was refused: an ARQ that could not get a
        handle or a device, or whose host work failed, ends BindFailed;
        one that cannot be bound (the first such refusal is raised) is
        left as it is. ``repeat``: the
        call repeats one that may have bound them already (see
        ``cyborg_lite.db.binding.bind``)."""
        failures, refusals, resolved = [], [], []
        for uuid, fields in bindings.items():
            try:
                arq = self._bind_one(ctx, uuid, fields, failures, bindings,
                                     repeat)
            except exception.CyborgLiteException as exc:
                # This ARQ cannot be bound (unknown, in a state that
                # cannot be bound, its instance has other ARQs) and is
                # left as it is; the others are still tried, and Nova
                # hears of those resolved.
                refusals.append(exc)
                continue
            if arq is not None:
                resolved.append(arq)
        # Resolved before this call answers: Nova's compute will find
        # them resolved and not wait for their events.
        self._notifier.notify(resolved, awaited=False)
        if refusals:
            raise refusals[0]
        if failures:
            reason = '; '.join(message for message, _ in failures)
            if all(isinstance(exc, exception.NotFound)
                   for _, exc in failures):
                # An unknown device_rp_uuid is a 404, as upstream.
                raise exception.NotFound(reason)
            raise exception.Conflict(reason=reason)

    def _bind_one(self, ctx, uuid, fields, failures, batch=(),
                  repeat=False):
        fields = {'hostname': fields['hostname'],
                  'device_rp_uuid': fields['device_rp_uuid'],
                  'instance_uuid': fields['instance_uuid'],
                  'project_id': fields.get('project_id') or ctx.project_id}
        try:
            result = binding.bind(self._db, uuid, fields, ctx.scope_project,
                                  batch, repeat=repeat)
        except (exception.NoFreeAttachHandle,
                exception.DeployableNotFound) as exc:
            # The ARQ was Initial or Unbound and took no handle.
            binding.fail_bind(self._db, uuid,
                              {states.INITIAL, states.UNBOUND},
                              handle_id=None, bind_fields=fields)
            failures.append(('%s: %s' % (uuid, exc.message), exc))
            return self._resolved_or_none(ctx, uuid)
        LOG.info('arq %s: %s -> %s', uuid, result.previous_state,
                 states.BOUND if result.finished else states.BIND_STARTED)
        if result.repeated:
            if result.finished:
                # Bound by the call this one repeats: Nova hears of it
                # again.
                return result.arq
            return self._take_over(ctx, uuid, fields, failures)
        if result.finished:
            return result.arq
        return self._finish_host_work(ctx, uuid, fields, result.handle,
                                      result.bitstream_id, failures)

    def _finish_host_work(self, ctx, uuid, fields, handle, bitstream,
                          failures):
        """Create the handle's mdev and finish the bind (the ARQ, for
        Nova), or program the FPGA in the background (None: that thread
        tells Nova)."""
        if handle['attach_type'] == model.AttachType.MDEV.value:
            return self._finish_mdev(ctx, uuid, fields, handle, failures)
        threading.Thread(target=self._program_and_finish,
                         args=(ctx, uuid, fields, bitstream, handle['id']),
                         daemon=True, name='program-%s' % uuid).start()
        return None

    def _take_over(self, ctx, uuid, fields, failures):
        """Finish a bind that the call this one repeats left in
        BindStarted: its conductor was lost with the call, and with it
        the host work it had started. Creating an mdev that exists and
        programming a bitstream again are harmless, and the writes that
        end the bind are guarded by its handle, so a conductor that was
        still at it after all and this one cannot both move the ARQ."""
        work = binding.bind_in_progress(self._db, uuid)
        if work is None:
            # Finished or failed meanwhile: Nova hears of it again.
            return self._resolved_or_none(ctx, uuid)
        handle, bitstream = work
        LOG.info('arq %s: finishing the bind of a repeated call', uuid)
        return self._finish_host_work(ctx, uuid, fields, handle, bitstream,
                                      failures)

    def _resolved_or_none(self, ctx, uuid):
        """The ARQ as it is now, or None if it was deleted meanwhile."""
        try:
            return self.get(ctx, uuid)
        except exception.ARQNotFound:
            return None

    def _finish_mdev(self, ctx, uuid, fields, handle, failures):
        try:
            self._agents.create_mdev(fields['hostname'], handle)
        except Exception as exc:
            LOG.warning('arq %s: mdev creation failed: %s', uuid, exc)
            binding.fail_bind(self._db, uuid, {states.BIND_STARTED},
                              handle_id=handle['id'])
            failures.append(('%s: mdev creation failed: %s' % (uuid, exc),
                             exc))
            return self._resolved_or_none(ctx, uuid)
        if not binding.finish_bind(self._db, uuid, handle['id']):
            # The ARQ moved on (unbound, failed) while the mdev was made.
            try:
                self._remove_mdev(fields['hostname'], handle)
            except exception.CyborgLiteException as exc:
                LOG.warning('arq %s: the mdev of a bind that moved on '
                            'stays: %s', uuid, exc)
        LOG.info('arq %s: BindStarted -> Bound', uuid)
        return self._resolved_or_none(ctx, uuid)

    def _program_and_finish(self, ctx, uuid, fields, bitstream, handle_id):
        """Program the FPGA, then finish the bind that took ``handle_id``
        (or fail it). While the agent programs, the bind is kept fresh,
        so that the sweep, which takes over binds older than
        bind_timeout (their conductor was lost), leaves a long
        programming to this conductor."""
        with self._programming_lock:
            self._programming[uuid] = handle_id
        programming = threading.Event()
        keeper = threading.Thread(
            target=self._keep_fresh, args=(uuid, handle_id, programming),
            daemon=True, name='keep-%s' % uuid)
        keeper.start()
        try:
            # The agent needs the control path, which bind() does not load.
            target = inventory.deployable_by_rp(self._db,
                                                fields['device_rp_uuid'])
            self._agents.program(fields['hostname'], target, bitstream)
            inventory.set_bitstream(self._db, target['id'], bitstream)
            ok = binding.finish_bind(self._db, uuid, handle_id)
        except Exception as exc:
            LOG.warning('arq %s: programming failed: %s', uuid, exc)
            ok = False
        finally:
            programming.set()
            keeper.join()
            with self._programming_lock:
                self._programming.pop(uuid, None)
        if not ok:
            binding.fail_bind(self._db, uuid, {states.BIND_STARTED},
                              handle_id=handle_id)
        arq = self._resolved_or_none(ctx, uuid)
        if arq is None:
            LOG.info('arq %s: deleted while its FPGA was programmed', uuid)
            return
        LOG.info('arq %s: BindStarted -> %s', uuid, arq['state'])
        self._notifier.notify([arq])

    def _keep_fresh(self, uuid, handle_id, done):
        """Until ``done``, mark the bind as worked on three times per
        bind_timeout."""
        interval = self._conf.conductor.bind_timeout / 3
        while not done.wait(interval) and not self._leaving.is_set():
            try:
                if not binding.keep_bind_fresh(self._db, uuid, handle_id):
                    return
            except Exception:
                LOG.exception('arq %s: could not mark its bind as in '
                              'progress', uuid)

    # --- unbind and delete --------------------------------------------

    def _undo_host_work(self, held):
        """Remove the mdevs of ARQs about to let their handles go."""
        for arq in held:
            handle = arq['handle']
            if handle and handle['attach_type'] == \
                    model.AttachType.MDEV.value:
                self._remove_mdev(arq['hostname'], handle)

    def _remove_mdev(self, hostname, handle):
        """The agent removes an mdev; its failure is the host's (502),
        and the ARQ keeps its handle, to be unbound or deleted again."""
        try:
            self._agents.remove_mdev(hostname, handle)
        except exception.CyborgLiteException:
            raise
        except Exception as exc:
            raise exception.AgentError(
                host=hostname, reason='removing mdev %s: %s' % (
                    handle.get('uuid'), str(exc).split('\n')[0])) from None

    def unbind(self, ctx, uuids):
        held = db_api.arqs_with_handles(
            self._db, project_id=ctx.scope_project, uuids=uuids)
        missing = set(uuids) - {a['uuid'] for a in held}
        if missing:
            raise exception.ARQNotFound(uuid=', '.join(sorted(missing)))
        self._undo_host_work(held)
        purge = False
        for uuid in uuids:
            purge |= binding.unbind(self._db, uuid, ctx.scope_project)
            LOG.info('arq %s: -> %s', uuid, states.UNBOUND)
        if purge:
            self._purge_vanished()

    def delete(self, ctx, uuids=None, instance_uuid=None, repeat=False):
        """Delete ARQs by uuid, or every ARQ of an instance, releasing
        their handles; one transaction unless an mdev must go first.
        ``repeat``: the call repeats one that may have deleted some of
        them already, so ARQs not found count as deleted."""
        def check(held):
            if instance_uuid is None and not repeat:
                missing = set(uuids) - {a['uuid'] for a in held}
                if missing:
                    raise exception.ARQNotFound(
                        uuid=', '.join(sorted(missing)))
            if not ctx.is_service and any(a['instance_uuid'] for a in held):
                raise exception.Forbidden(
                    reason='Deleting a bound accelerator request requires '
                           'a service token. Use the Compute API to '
                           'manage instance accelerators.')

        scope = {'project_id': ctx.scope_project,
                 'instance_uuid': instance_uuid,
                 'uuids': None if instance_uuid is not None else uuids}
        done = db_api.arq_delete(self._db, check, **scope)
        if not done.deleted:
            self._undo_host_work(done.held)
            done = db_api.arq_delete(self._db, check, host_work_undone=True,
                                     **scope)
        if done.held:
            LOG.info('Deleted ARQ(s) %s',
                     ', '.join(a['uuid'] for a in done.held))
        if done.purge:
            self._purge_vanished()

    def _purge_vanished(self):
        names = reports.purge_vanished(self._db)
        for name in names:
            LOG.info('Removed vanished deployable %s', name)
        if names and self._on_purged is not None:
            try:
                self._on_purged(names)
            except Exception:
                LOG.exception('Deleting the providers of %s failed',
                              ', '.join(names))

    def leave_host_work(self):
        """For a conductor that stops: leave the FPGA programmings it
        waits for to the next sweep, which takes each over at once
        (another conductor's, or this one's when it starts again)
        instead of after bind_timeout; returns how many it left."""
        self._leaving.set()
        with self._programming_lock:
            work = dict(self._programming)
        left = 0
        for uuid, handle_id in work.items():
            try:
                if binding.leave_bind(self._db, uuid, handle_id):
                    LOG.info('arq %s: its FPGA programming is left to the '
                             'next sweep', uuid)
                    left += 1
            except Exception:
                LOG.exception('arq %s: could not leave its bind to the '
                              'sweep; it is taken over after '
                              'bind_timeout', uuid)
        return left

    # --- the sweep ----------------------------------------------------

    def sweep(self):
        """Take over the binds left in BindStarted for longer than
        bind_timeout: a conductor that works on a bind marks it as
        worked on three times per bind_timeout, so such a bind lost its
        conductor (killed, or stopped while the agent programmed the
        FPGA). Its host work is done again here, in the background:
        programming a bitstream or creating an mdev again is harmless,
        and the writes that end the bind are guarded by its handle. The
        bind then ends Bound, or BindFailed when the host work fails
        (its agent is gone too), and Nova hears of it either way.
        Returns how many binds this sweep took over."""
        cutoff = timeutils.utcnow() - timeutils.datetime.timedelta(
            seconds=self._conf.conductor.bind_timeout)
        taken = 0
        for arq in db_api.arqs_stuck(self._db, cutoff):
            if self._leaving.is_set():
                break       # stopping: what it took over would be lost
            work = binding.claim_stuck_bind(self._db, arq['uuid'], cutoff)
            if work is None:
                continue    # finished, or claimed elsewhere, since read
            LOG.warning('arq %s: taking over a bind left in BindStarted '
                        'longer than %ss (its conductor was lost)',
                        arq['uuid'], self._conf.conductor.bind_timeout)
            threading.Thread(
                target=self._finish_taken_over, args=(arq, *work),
                daemon=True, name='take-over-%s' % arq['uuid']).start()
            taken += 1
        return taken

    def _finish_taken_over(self, arq, handle, bitstream):
        """Do the host work of a bind the sweep took over, and tell Nova
        how it ended."""
        ctx = context.RequestContext.admin()
        fields = {name: arq[name] for name in (
            'hostname', 'device_rp_uuid', 'instance_uuid', 'project_id')}
        resolved = self._finish_host_work(ctx, arq['uuid'], fields, handle,
                                          bitstream, failures=[])
        if resolved is not None:    # None: the programming thread tells
            self._notifier.notify([resolved])
