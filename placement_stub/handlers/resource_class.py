"""Handlers for /resource_classes[/{name}]."""

from oslo_db import exception as db_exc

from placement_stub.db import resource_classes
from placement_stub import errors
from placement_stub import exception
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub.schemas import resource_class as schema


def _body(req, name):
    return {'name': name, 'links': [
        {'rel': 'self',
         'href': req.script_name + '/resource_classes/' + name}]}


def list_resource_classes(req):
    common.require(req, mv.allow_resource_classes)
    names = resource_classes.list_classes(common.context(req))
    return common.json_response(
        {'resource_classes': [_body(req, n) for n in names]})


def get_resource_class(req):
    common.require(req, mv.allow_resource_classes)
    name = req.urlvars['name']
    if not resource_classes.exists(common.context(req), name):
        raise errors.not_found('No such resource class %s.' % name)
    return common.json_response(_body(req, name))


def create_resource_class(req):
    common.require(req, mv.allow_resource_classes)
    data = common.extract_json(req, schema.POST_RC_SCHEMA_V1_2)
    resource_classes.create_class(common.context(req), data['name'])
    return common.no_content(201, headers={
        'Location': req.script_name + '/resource_classes/' + data['name']})


def update_resource_class(req):
    """Rename before 1.7; from 1.7 create-if-missing with no body."""
    common.require(req, mv.allow_resource_classes)
    ctx = common.context(req)
    name = req.urlvars['name']
    if not mv.allow_put_resource_class_create(common.version(req)):
        data = common.extract_json(req, schema.PUT_RC_SCHEMA_V1_2)
        resource_classes.rename_class(ctx, name, data['name'])
        return common.json_response(_body(req, data['name']))
    # The name is checked as a body's would be, as Placement does.
    common.validate_data({'name': name}, schema.PUT_RC_SCHEMA_V1_2)
    status = 204
    if not resource_classes.exists(ctx, name):
        try:
            resource_classes.create_class(ctx, name)
            status = 201
        except (exception.Conflict, db_exc.DBDuplicateEntry):
            pass  # created by a concurrent request: 204, as Placement
    return common.no_content(status, headers={
        'Location': req.script_name + '/resource_classes/' + name})


def delete_resource_class(req):
    common.require(req, mv.allow_resource_classes)
    resource_classes.delete_class(common.context(req), req.urlvars['name'])
    return common.no_content()
