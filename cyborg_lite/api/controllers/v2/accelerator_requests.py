"""/v2/accelerator_requests: create, list, show, bind, unbind, delete.

Bind, unbind, ``DELETE ?instance=`` and deleting a bound ARQ need a
service token (the guide's architecture page, "Authentication and
policy"); that is checked here and in the conductor, not by policy, so
no policy file can open it up.
"""

import pecan
from oslo_utils import uuidutils

from cyborg_lite import exception
from cyborg_lite.api import microversion
from cyborg_lite.api import validation
from cyborg_lite.api import views
from cyborg_lite.api.controllers.v2 import base
from cyborg_lite.api.schemas import accelerator_requests as schemas

BIND_FIELDS = ('hostname', 'device_rp_uuid', 'instance_uuid')
SERVICE_TOKEN_NEEDED = ('This operation requires a service token. Use the '
                        'Compute API to manage instance accelerators.')


def _require_service(ctx):
    if not ctx.is_service:
        raise exception.Forbidden(SERVICE_TOKEN_NEEDED)


def _parse_ops(arq_uuid, ops, version, ctx):
    """One ARQ's patch: ('bind', fields) or ('unbind', None)."""
    kinds = {op['op'] for op in ops}
    if len(kinds) != 1:
        raise exception.Invalid(
            reason='The patch of ARQ %s mixes add and remove operations.'
                   % arq_uuid)
    paths = [op['path'] for op in ops]
    if len(set(paths)) != len(paths):
        raise exception.Invalid(
            reason='The patch of ARQ %s repeats a path.' % arq_uuid)
    if '/project_id' in paths:
        if not microversion.allow_project_id_patch(version):
            raise exception.NotAcceptable(
                'Request not acceptable. The minimal required API version '
                'should be 2.1 to patch /project_id.')
        if not ctx.is_admin:
            raise exception.Forbidden(
                'Only administrators may set the project of an ARQ.')
    if kinds == {'remove'}:
        return 'unbind', None
    fields = {}
    for op in ops:
        if 'value' not in op:
            raise exception.Invalid(reason='Operation add %s of ARQ %s has '
                                           'no value.' % (op['path'],
                                                          arq_uuid))
        fields[op['path'][1:]] = op['value']
    missing = [f for f in BIND_FIELDS if f not in fields]
    if missing:
        raise exception.Invalid(reason='Fields absent in patch of ARQ %s: '
                                       '%s' % (arq_uuid, ', '.join(missing)))
    for name in ('device_rp_uuid', 'instance_uuid'):
        fields[name] = validation.uuid_param(fields[name], name)
    return 'bind', fields


class AcceleratorRequestsController(base.Controller):

    @pecan.expose('json')
    def get_all(self, **kwargs):
        ctx = base.authorize('cyborg:arq:get_all')
        instance = base.query('instance')
        if instance is not None:
            instance = validation.uuid_param(instance, 'instance')
        bind_state = base.query('bind_state')
        if bind_state is not None and bind_state != 'resolved':
            raise exception.Invalid(
                reason='bind_state may only be "resolved", not %r.'
                       % bind_state[:64])
        arqs = pecan.request.conductor.arq_list(ctx, instance, bind_state)
        url = base.base_url()
        return {'arqs': [views.arq(url, a) for a in arqs]}

    @pecan.expose('json')
    def get_one(self, uuid, **kwargs):
        ctx = base.authorize('cyborg:arq:get_one')
        if not uuidutils.is_uuid_like(uuid):
            raise exception.ARQNotFound(uuid=uuid[:64])
        return views.arq(base.base_url(), pecan.request.conductor.arq_get(
            ctx, validation.canonical_id(uuid)))

    @pecan.expose('json')
    def post(self, **kwargs):
        ctx = base.authorize('cyborg:arq:create')
        body = validation.validate(validation.json_body(pecan.request),
                                   schemas.POST_ARQ_SCHEMA_V2_0)
        arqs = pecan.request.conductor.arq_create(
            ctx, body['device_profile_name'])
        base.set_status(201)
        url = base.base_url()
        return {'arqs': [views.arq(url, a) for a in arqs]}

    @base.expose_no_body
    def patch(self, *args, **kwargs):
        ctx = base.authorize('cyborg:arq:update')
        body = validation.validate(validation.json_body(pecan.request),
                                   schemas.PATCH_ARQ_SCHEMA_V2_0)
        bindings, unbinds = {}, []
        for arq_uuid, ops in body.items():
            kind, fields = _parse_ops(arq_uuid, ops, pecan.request.version,
                                      ctx)
            arq_uuid = validation.canonical_id(arq_uuid)
            if arq_uuid in bindings or arq_uuid in unbinds:
                raise exception.Invalid(
                    reason='The patch names ARQ %s twice.' % arq_uuid)
            if kind == 'bind':
                bindings[arq_uuid] = fields
            else:
                unbinds.append(arq_uuid)
        _require_service(ctx)
        conductor = pecan.request.conductor
        if unbinds:
            conductor.arq_unbind(ctx, unbinds)
        if bindings:
            conductor.arq_bind(ctx, bindings)
        base.set_status(202)
        pecan.response.content_type = None
        return ''

    @base.expose_no_body
    def delete(self, *path, **kwargs):
        ctx = base.authorize('cyborg:arq:delete')
        uuid = base.path_id(path)
        arqs, instance = base.query('arqs'), base.query('instance')
        if uuid is not None:
            if arqs is not None or instance is not None:
                raise exception.Invalid(
                    reason='Give the ARQ in the path or in the query, '
                           'not both.')
            arqs = uuid
        if (arqs is None) == (instance is None):
            raise exception.Invalid(
                reason='Give exactly one of ?arqs= and ?instance=.')
        conductor = pecan.request.conductor
        if instance is not None:
            instance = validation.uuid_param(instance, 'instance')
            _require_service(ctx)
            conductor.arq_delete(ctx, instance_uuid=instance)
        else:
            uuids = [u.strip() for u in arqs.split(',') if u.strip()]
            if not uuids:
                raise exception.Invalid(reason='?arqs= names no ARQ.')
            for u in uuids:
                if not uuidutils.is_uuid_like(u):
                    raise exception.ARQNotFound(uuid=u[:64])
            conductor.arq_delete(
                ctx, uuids=[validation.canonical_id(u) for u in uuids])
        return base.no_content()
