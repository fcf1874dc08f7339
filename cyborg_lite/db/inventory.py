"""Context-first database functions for devices, deployables,
attributes and attach handles: what the agents report.

Reads return API-shaped dicts (less links). Writes apply a
``cyborg_lite.conductor.inventory.HostDiff`` and touch only the rows
that changed.
"""

import json

from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg_lite import exception
from cyborg_lite.db import engine
from cyborg_lite.db import models
from cyborg_lite.db.api import isotime


def _stamps(row):
    return {'created_at': isotime(row.created_at),
            'updated_at': isotime(row.updated_at)}


def _device_dict(row):
    return dict(uuid=row.uuid, type=row.type, vendor=row.vendor,
                model=row.model, std_board_info=row.std_board_info,
                vendor_board_info=row.vendor_board_info,
                hostname=row.hostname, status=row.status, **_stamps(row))


def _attributes_list(attrs):
    return json.dumps([{a.key: a.value} for a in attrs])


def _deployable_dict(row, attrs):
    return dict(uuid=row.uuid, name=row.name, parent_id=row.parent_id,
                root_id=row.root_id, num_accelerators=row.num_accelerators,
                device_id=row.device_id, rp_uuid=row.rp_uuid,
                driver_name=row.driver_name, bitstream_id=row.bitstream_id,
                attributes_list=_attributes_list(attrs), **_stamps(row))


def _attribute_dict(row):
    return dict(uuid=row.uuid, deployable_id=row.deployable_id, key=row.key,
                value=row.value, **_stamps(row))


# --- reads ------------------------------------------------------------

def _filtered(query, filters):
    """``query`` with ``column == value`` for each value that is set."""
    for column, value in filters:
        if value is not None:
            query = query.where(column == value)
    return query


def _one_by_uuid(session, model_cls, uuid, not_found):
    row = session.scalars(sa.select(model_cls).where(
        model_cls.uuid == uuid)).first()
    if row is None:
        raise not_found
    return row


def device_list(db, type=None, vendor=None, hostname=None):
    query = _filtered(sa.select(models.Device).order_by(models.Device.id),
                      ((models.Device.type, type),
                       (models.Device.vendor, vendor),
                       (models.Device.hostname, hostname)))
    with db.reader() as session:
        return [_device_dict(r) for r in session.scalars(query)]


def device_get(db, uuid):
    with db.reader() as session:
        return _device_dict(_one_by_uuid(
            session, models.Device, uuid,
            exception.DeviceNotFound(uuid=uuid)))


def _attrs_by_deployable(session, deployable_ids):
    attrs = {}
    if not deployable_ids:
        return attrs
    for attr in session.scalars(
            sa.select(models.Attribute)
            .where(models.Attribute.deployable_id.in_(deployable_ids))
            .order_by(models.Attribute.id)):
        attrs.setdefault(attr.deployable_id, []).append(attr)
    return attrs


def deployable_list(db, name=None, device_id=None):
    query = _filtered(
        sa.select(models.Deployable).order_by(models.Deployable.id),
        ((models.Deployable.name, name),
         (models.Deployable.device_id, device_id)))
    with db.reader() as session:
        rows = list(session.scalars(query))
        attrs = _attrs_by_deployable(session, [r.id for r in rows])
        return [_deployable_dict(r, attrs.get(r.id, [])) for r in rows]


def deployable_get(db, uuid):
    with db.reader() as session:
        row = _one_by_uuid(session, models.Deployable, uuid,
                           exception.DeployableNotFound(ident=uuid))
        attrs = _attrs_by_deployable(session, [row.id])
        return _deployable_dict(row, attrs.get(row.id, []))


def attribute_list(db, deployable_id=None, key=None):
    query = _filtered(
        sa.select(models.Attribute).order_by(models.Attribute.id),
        ((models.Attribute.deployable_id, deployable_id),
         (models.Attribute.key, key)))
    with db.reader() as session:
        return [_attribute_dict(r) for r in session.scalars(query)]


def attribute_get(db, uuid):
    with db.reader() as session:
        return _attribute_dict(_one_by_uuid(
            session, models.Attribute, uuid,
            exception.AttributeNotFound(uuid=uuid)))


# --- admin writes -----------------------------------------------------

@engine.retry_on_conflict()
def attribute_create(db, deployable_id, key, value):
    with db.writer() as session:
        if session.get(models.Deployable, deployable_id) is None:
            raise exception.DeployableNotFound(ident=deployable_id)
        row = models.Attribute(uuid=uuidutils.generate_uuid(),
                               deployable_id=deployable_id, key=key,
                               value=value)
        session.add(row)
        session.flush()
        return _attribute_dict(row)


@engine.retry_on_conflict()
def attribute_delete(db, uuid):
    with db.writer() as session:
        deleted = session.execute(sa.delete(models.Attribute).where(
            models.Attribute.uuid == uuid)).rowcount
    if not deleted:
        raise exception.AttributeNotFound(uuid=uuid)


@engine.retry_on_conflict()
def device_set_status(db, uuid, status):
    """Set a device's status; returns the status it had and the
    Placement view of its deployables: ``(previous, [{rp_uuid, rc,
    total}])``. A deployable without an
    ``rc`` attribute (an admin deleted it) has no inventory to reserve
    or free: ResourceClassNotFound (404, as upstream), and the status
    stays as it was."""
    with db.writer() as session:
        device = session.scalars(sa.select(models.Device).where(
            models.Device.uuid == uuid)).first()
        if device is None:
            raise exception.DeviceNotFound(uuid=uuid)
        deps = list(session.scalars(sa.select(models.Deployable).where(
            models.Deployable.device_id == device.id)))
        attrs = _attrs_by_deployable(session, [d.id for d in deps])
        views = [{'name': d.name, 'rp_uuid': d.rp_uuid,
                  'total': d.num_accelerators,
                  'rc': next((a.value for a in attrs.get(d.id, [])
                              if a.key == 'rc'), None)} for d in deps]
        for view in views:
            if view['rc'] is None:
                raise exception.ResourceClassNotFound(
                    deployable=view['name'], device=uuid)
        previous, device.status = device.status, status
        return previous, views


def deployable_by_rp(db, rp_uuid):
    """The deployable behind a resource provider, with its device's
    host and control path (for host work at bind time)."""
    query = (sa.select(models.Deployable, models.Device.hostname,
                       models.ControlpathID.cpid_info)
             .join(models.Device,
                   models.Deployable.device_id == models.Device.id)
             .join(models.ControlpathID,
                   models.ControlpathID.device_id == models.Device.id)
             .where(models.Deployable.rp_uuid == rp_uuid))
    with db.reader() as session:
        row = session.execute(query).first()
        if row is None:
            raise exception.DeployableNotFound(ident=rp_uuid)
        dep, hostname, cpid_info = row
        attrs = _attrs_by_deployable(session, [dep.id])
        return dict(_deployable_dict(dep, attrs.get(dep.id, [])),
                    id=dep.id, hostname=hostname, controlpath_info=cpid_info)


def set_bitstream(db, deployable_id, bitstream_id):
    with db.writer() as session:
        session.execute(sa.update(models.Deployable)
                        .where(models.Deployable.id == deployable_id)
                        .values(bitstream_id=bitstream_id))

