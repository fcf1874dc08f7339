"""An instance's accelerator requests (ARQs) in Cyborg.

Create and bind them on the chosen compute node, wait until Cyborg says
they are bound (``accelerator-request-bound`` events, with ARQs already
resolved taken as early events, up to ``[DEFAULT] arq_binding_timeout``),
read them back, and delete them. As Nova's
``ComputeManager._get_bound_arq_resources``, with one difference: an ARQ
found in BindFailed through the early-exit path fails the build rather
than booting without it.
"""

import logging

from nova_shim.accelerator import cyborg
from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute.events import EventWaiter
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.objects import Instance
from nova_shim.scheduler import Selection

LOG = logging.getLogger(__name__)

EVENT_NAME = 'accelerator-request-bound'
# An ARQ's state as an event status, as Cyborg's conductor sends it.
_EVENT_STATUS = {'Bound': 'completed', 'BindFailed': 'failed',
                 'Deleting': 'failed'}


def client(deps: ComputeDeps, ctx: RequestContext):
    return cyborg.get_client(ctx, deps.conf)


def request_groups(deps: ComputeDeps, ctx: RequestContext,
                   instance: Instance) -> list:
    """Placement request groups of the instance's device profile."""
    if not instance.device_profile:
        return []
    return cyborg.get_device_profile_request_groups(
        ctx, instance.device_profile, conf=deps.conf)


def create_and_bind(deps: ComputeDeps, ctx: RequestContext,
                    instance: Instance,
                    selection: Selection) -> tuple[list[str], EventWaiter]:
    """Create the ARQs, expect their events, bind them.

    The waiter is prepared before the bind so that no event is lost. On
    a bind failure the new ARQs are deleted and the error re-raised.
    """
    cy = client(deps, ctx)
    arqs = cy.create_arqs_and_match_resource_providers(
        instance.device_profile, selection.mappings)
    uuids = [arq['uuid'] for arq in arqs]
    deps.db.update(instance.uuid, arq_uuids=uuids)
    waiter = deps.events.prepare(instance.uuid,
                                 [(EVENT_NAME, u) for u in uuids])
    bindings = {arq['uuid']: {'hostname': selection.compute_node_name,
                              'device_rp_uuid': arq['device_rp_uuid'],
                              'instance_uuid': instance.uuid}
                for arq in arqs}
    try:
        cy.bind_arqs(bindings)
    except exception.AcceleratorRequestBindingFailed:
        deps.events.forget(waiter)
        cy.delete_arqs_by_uuid(uuids)
        deps.db.update(instance.uuid, arq_uuids=[])
        raise
    return uuids, waiter


def unbind(deps: ComputeDeps, ctx: RequestContext,
           uuids: list[str]) -> None:
    """Unbind some of an instance's ARQs (a guest leaving its host):
    Cyborg frees their devices and keeps the ARQs, Unbound, to be bound
    again (``rebind``) or deleted. AcceleratorRequestOpFailed if Cyborg
    refuses."""
    client(deps, ctx).unbind_arqs(list(uuids))


def rebind(deps: ComputeDeps, ctx: RequestContext, instance_uuid: str,
           hostname: str, bindings: dict[str, str]) -> list[dict]:
    """Bind Unbound ARQs (``{arq uuid: device rp uuid}``) to the
    instance on ``hostname`` again, and wait until Cyborg says they are
    bound: the ARQs, in ``bindings``' order. AcceleratorRequestBinding
    Failed or BuildAbortException when they do not bind."""
    if not bindings:
        return []
    waiter = deps.events.prepare(instance_uuid,
                                 [(EVENT_NAME, u) for u in bindings])
    try:
        client(deps, ctx).bind_arqs(
            {arq: {'hostname': hostname, 'device_rp_uuid': rp,
                   'instance_uuid': instance_uuid}
             for arq, rp in bindings.items()})
    except exception.AcceleratorRequestBindingFailed:
        deps.events.forget(waiter)
        raise
    arqs = {arq['uuid']: arq for arq in
            wait_for_bound_arqs(deps, ctx, instance_uuid, waiter)}
    return [arqs[u] for u in bindings]


def expect_events(deps: ComputeDeps, instance: Instance) -> EventWaiter:
    """A waiter for the events of the ARQs the instance already has."""
    return deps.events.prepare(instance.uuid,
                               [(EVENT_NAME, u) for u in instance.arq_uuids])


def wait_for_bound_arqs(deps: ComputeDeps, ctx: RequestContext,
                        instance_uuid: str,
                        waiter: EventWaiter) -> list[dict]:
    """The ARQs ``waiter`` waits for, once all are Bound;
    BuildAbortException if one failed or the events did not come in
    time. (During a cold migration or resize the instance also has the
    ARQs bound on its source, which are not waited for.)"""
    cy = client(deps, ctx)
    expected = {tag for _name, tag in waiter.expected}
    try:
        for arq in cy.get_arqs_for_instance(instance_uuid,
                                            only_resolved=True):
            if arq['uuid'] in expected:
                waiter.exit_early((EVENT_NAME, arq['uuid']),
                                  _EVENT_STATUS[arq['state']])
        statuses = waiter.wait(deps.conf.arq_binding_timeout)
    except exception.InstanceEventTimeout as exc:
        LOG.error('instance %s: %s', instance_uuid, exc)
        raise exception.BuildAbortException(
            instance_uuid=instance_uuid,
            reason='Timed out waiting for accelerator requests to be '
                   'bound.') from exc
    finally:
        deps.events.forget(waiter)
    failed = sorted(tag for (_, tag), status in statuses.items()
                    if status == 'failed')
    if failed:
        raise exception.BuildAbortException(
            instance_uuid=instance_uuid,
            reason='Binding failed for accelerator requests %s.'
                   % ','.join(failed))
    arqs = [arq for arq in cy.get_arqs_for_instance(instance_uuid)
            if arq['uuid'] in expected]
    unbound = [arq['uuid'] for arq in arqs if arq['state'] != 'Bound']
    if unbound:
        raise exception.BuildAbortException(
            instance_uuid=instance_uuid,
            reason='Accelerator requests %s are not bound.'
                   % ','.join(unbound))
    return arqs


def get_arqs(deps: ComputeDeps, ctx: RequestContext,
             instance: Instance) -> list[dict]:
    """The instance's ARQs, fetched afresh (start, reboot); none if its
    flavor asks for no accelerators."""
    if not instance.device_profile:
        return []
    return client(deps, ctx).get_arqs_for_instance(instance.uuid)


def list_arqs(deps: ComputeDeps, ctx: RequestContext,
              instance: Instance) -> list[dict]:
    """The instance's ARQs for display; an empty list if it has none,
    or (logged) if Cyborg cannot be read."""
    if not instance.device_profile:
        return []
    try:
        return client(deps, ctx).get_arqs_for_instance(instance.uuid)
    except exception.AcceleratorRequestOpFailed as exc:
        LOG.warning('instance %s: its ARQs could not be read: %s',
                    instance.uuid, exc)
        return []


def delete_arqs(deps: ComputeDeps, ctx: RequestContext,
                instance: Instance, strict: bool = False) -> None:
    """Delete the instance's ARQs, bound or not; errors are logged.

    ``DELETE ?instance=`` removes every ARQ a bind gave the instance;
    ``?arqs=`` is sent, as Nova's ``delete_arqs_if_needed`` sends it,
    only for ARQs that may not have been bound: those of an instance
    still building (deleted between the create and the bind), or all of
    them when the first call failed. (An instance past its build has
    bound ARQs or none: a failed bind or spawn deletes them.) With
    ``strict``, a failure of ``DELETE ?instance=`` is raised instead,
    for a caller that must not go on while Cyborg holds the devices.
    """
    if not instance.device_profile:
        return
    cy = client(deps, ctx)
    try:
        cy.delete_arqs_for_instance(instance.uuid)
    except exception.AcceleratorRequestOpFailed as exc:
        if strict:
            raise
        LOG.error('instance %s: deleting ARQs failed: %s', instance.uuid,
                  exc)
    else:
        if instance.vm_state != states.BUILDING:
            return
    cy.delete_arqs_by_uuid(instance.arq_uuids)


def delete_attempt_arqs(deps: ComputeDeps, ctx: RequestContext,
                        instance: Instance) -> None:
    """Delete the ARQs a failed build attempt created, bound or not
    (``DELETE ?arqs=``, which removes Bound and BindFailed ones alike);
    errors are logged."""
    if instance.device_profile:
        delete_arqs_by_uuid(deps, ctx, instance.arq_uuids)


def delete_arqs_by_uuid(deps: ComputeDeps, ctx: RequestContext,
                        uuids: list[str], strict: bool = False) -> None:
    """Delete some of an instance's ARQs, bound or not (one side of a
    move: the source's on confirm, the destination's on revert or
    failure); errors are logged, or with ``strict`` raised."""
    if uuids:
        client(deps, ctx).delete_arqs_by_uuid(list(uuids), strict=strict)
