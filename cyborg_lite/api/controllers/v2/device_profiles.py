"""/v2/device_profiles: list, show, create and delete device profiles."""

import pecan
from oslo_utils import uuidutils

from cyborg_lite import exception
from cyborg_lite import profiles
from cyborg_lite.api import microversion
from cyborg_lite.api import validation
from cyborg_lite.api import views
from cyborg_lite.api.controllers.v2 import base
from cyborg_lite.api.schemas import device_profiles as schemas


def _names(value):
    names = [n.strip() for n in value.split(',') if n.strip()]
    if not names:
        raise exception.Invalid(reason='No device profile name was given.')
    return names


class DeviceProfilesController(base.Controller):

    @pecan.expose('json')
    def get_all(self, **kwargs):
        ctx = base.authorize('cyborg:device_profile:get_all')
        name = base.query('name')
        names = _names(name) if name is not None else None
        items = pecan.request.conductor.device_profile_list(ctx, names)
        url = base.base_url()
        return {'device_profiles': [views.device_profile(url, dp)
                                    for dp in items]}

    @pecan.expose('json')
    def get_one(self, ident, **kwargs):
        ctx = base.authorize('cyborg:device_profile:get_one')
        if uuidutils.is_uuid_like(ident):
            dp = pecan.request.conductor.device_profile_get(
                ctx, uuid=validation.canonical_id(ident))
        elif microversion.allow_device_profile_by_name(pecan.request.version):
            dp = pecan.request.conductor.device_profile_get(ctx, name=ident)
        else:
            raise exception.NotAcceptable(
                'Request not acceptable. The minimal required API version '
                'should be 2.2 to show a device profile by name.')
        return {'device_profile': views.device_profile(base.base_url(), dp)}

    @pecan.expose('json')
    def post(self, **kwargs):
        ctx = base.authorize('cyborg:device_profile:create')
        body = validation.validate(validation.json_body(pecan.request),
                                   schemas.POST_DEVICE_PROFILE_SCHEMA_V2_0)
        profile = dict(body[0])
        profiles.check_name(profile['name'])
        if 'uuid' in profile:
            profile['uuid'] = validation.uuid_param(profile['uuid'], 'uuid')
        profile['groups'] = profiles.normalize_groups(profile['groups'])
        dp = pecan.request.conductor.device_profile_create(ctx, profile)
        base.set_status(201)
        return views.device_profile(base.base_url(), dp)

    @base.expose_no_body
    def delete(self, *path, **kwargs):
        ctx = base.authorize('cyborg:device_profile:delete')
        ident = base.path_id(path)
        if ident is None:
            value = base.query('value')
            if value is None:
                raise exception.Invalid(
                    reason='Name the profiles to delete in the path or '
                           'with ?value=name1,name2.')
            idents = _names(value)
        elif uuidutils.is_uuid_like(ident):
            idents = [ident]
        else:
            idents = _names(ident)
        uuids = [validation.canonical_id(i) for i in idents
                 if uuidutils.is_uuid_like(i)]
        names = [i for i in idents if not uuidutils.is_uuid_like(i)]
        pecan.request.conductor.device_profile_delete(ctx, uuids, names)
        return base.no_content()
