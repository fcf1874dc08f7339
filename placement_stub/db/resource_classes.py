"""Resource classes: the standard set plus CUSTOM_* ones."""

import sqlalchemy as sa

from placement_stub.db import api
from placement_stub.db import models
from placement_stub import exception
from placement_stub import standard

RC = models.ResourceClass


@api.reader
def list_classes(ctx) -> list:
    return list(ctx.session.execute(
        sa.select(RC.name).order_by(RC.id)).scalars())


@api.reader
def ids_by_name(ctx, names) -> dict:
    """``{name: id}`` for those of ``names`` that exist."""
    return api.ids_by_name(ctx, RC, names)


@api.reader
def names_by_id(ctx) -> dict:
    return dict(ctx.session.execute(sa.select(RC.id, RC.name)).all())


@api.reader
def exists(ctx, name: str) -> bool:
    return bool(ids_by_name(ctx, [name]))


@api.writer
def create_class(ctx, name: str) -> None:
    if exists(ctx, name):
        raise exception.Conflict(
            detail='Conflicting resource class already exists: %s' % name)
    ctx.session.add(RC(name=name))
    ctx.session.flush()


def _in_use(ctx, rc_id):
    return ctx.session.execute(sa.select(models.Inventory.id).where(
        models.Inventory.resource_class_id == rc_id)).first() is not None


@api.writer
def delete_class(ctx, name: str) -> None:
    if name in standard.RESOURCE_CLASSES:
        raise exception.InvalidInput(
            detail='Error in delete resource class: Cannot delete standard '
                   'resource class %s.' % name)
    rc_id = ids_by_name(ctx, [name]).get(name)
    if rc_id is None:
        raise exception.NotFound(what='No such resource class %s.' % name)
    if _in_use(ctx, rc_id):
        raise exception.Conflict(
            detail='Error in delete resource class: Cannot delete resource '
                   'class %s. Class is in use in inventory.' % name)
    ctx.session.execute(sa.delete(RC).where(RC.id == rc_id))


@api.writer
def rename_class(ctx, name: str, new_name: str) -> None:
    """The pre-1.7 PUT: rename a custom class."""
    if name in standard.RESOURCE_CLASSES:
        raise exception.InvalidInput(
            detail='Cannot update standard resource class %s' % name)
    rc_id = ids_by_name(ctx, [name]).get(name)
    if rc_id is None:
        raise exception.NotFound(what='No such resource class %s.' % name)
    if exists(ctx, new_name):
        raise exception.Conflict(
            detail='Resource class already exists: %s' % new_name)
    ctx.session.execute(sa.update(RC).where(RC.id == rc_id)
                        .values(name=new_name))
