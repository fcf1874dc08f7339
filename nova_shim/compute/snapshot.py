"""Snapshots and backups of instances: Nova's ``createImage`` and
``createBackup``, through the Image API v2 (``nova_shim.image.glance``).

As in Nova, an instance with accelerators may be snapshotted and backed
up: nothing here calls Cyborg, and the ARQs stay bound to the instance
as they are. The steps, in the request's thread:

1. find the image service (``[glance]``): ImageServiceNotConfigured
   when there is none, before the instance is touched;
2. claim the instance with a compare-and-swap (``power.begin``):
   task_state ``image_snapshot`` (``image_backup``) from a vm_state that
   ``ALLOWED_VM_STATES`` allows, with no other task running;
3. create the image record (``POST /v2/images``): the name, the disk and
   container formats, the request's metadata as properties, and Nova's
   own properties, which take precedence over the metadata:
   ``instance_uuid``, ``user_id``, ``image_type`` (``snapshot`` or
   ``backup``) and, for a backup, ``backup_type``. The image is private,
   or, when the caller's project does not own the instance, shared with
   the owner's project (``instance_owner`` property and an image member),
   as Nova does;
4. task_state ``image_uploading``; upload the root disk
   (``PUT /v2/images/{id}/file``, see ``nova_shim.virt.snapshot``:
   an empty raw image for a guest with no disk file);
5. clear the task_state; the vm_state and the power state are as before
   (a running guest with a disk file is paused while it is copied);
6. for a backup, rotation as Nova's: list the instance's backups of that
   ``backup_type`` (newest first) and delete those beyond ``rotation``.
   The backup just made counts as the newest even when Glance's
   ``created_at`` (seconds) ties with an older one. ``rotation`` 0 deletes
   them all, the new one included, as in Nova.

If a step fails, the image is deleted (as Nova's ``delete_image_on_error``
does), the task_state cleared and the vm_state left as it was; the error
goes back to the caller. A failed rotation leaves the new backup in
place and says so.

Unlike Nova, the API answers once the upload is done, not when the image
record exists; a client sees the task states only while the request
runs. nova_shim boots no images, so there are no base image properties
to inherit.
"""

import dataclasses
import logging
import os

from nova_shim.compute.deps import ComputeDeps
from nova_shim.compute import power
from nova_shim.compute import states
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.image import glance
from nova_shim.objects import Instance
from nova_shim.virt import snapshot as disk_snapshot

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ImageResult:
    """The image a snapshot or backup made, and its URL in Glance."""

    image_id: str
    url: str


def _image_record(ctx: RequestContext, instance: Instance, name: str,
                  disk_format: str, metadata: dict[str, str],
                  properties: dict[str, str]) -> dict:
    record = dict(metadata)
    record.update(properties)
    record['instance_uuid'] = instance.uuid
    if ctx.user_id:
        record['user_id'] = ctx.user_id
    if ctx.project_id != instance.project_id:
        record['visibility'] = 'shared'
        record['instance_owner'] = instance.project_id
    else:
        record['visibility'] = 'private'
    record.update(name=name, disk_format=disk_format,
                  container_format='bare')
    return record


def _end_task(deps: ComputeDeps, uuid: str, task_state: str) -> None:
    """Clear the task_state if it is still ours (a delete may have
    taken the instance meanwhile)."""
    try:
        deps.db.update(uuid, expected_task_state=task_state, task_state=None)
    except (exception.InstanceNotFound, exception.InstanceInvalidState):
        LOG.info('instance %s: left as another request put it', uuid)


def _snapshot(deps: ComputeDeps, ctx: RequestContext,
              client: glance.GlanceClient, uuid: str, action: str,
              task_state: str, name: str, metadata: dict[str, str],
              properties: dict[str, str]) -> ImageResult:
    instance = power.begin(deps, uuid, action, task_state)
    current, image_id = task_state, None
    try:
        disk = disk_snapshot.root_disk(deps.driver.get_xml(uuid))
        image_id = client.create(_image_record(
            ctx, instance, name, disk.disk_format, metadata,
            properties))['id']
        if ctx.project_id != instance.project_id:
            client.add_member(image_id, instance.project_id)
        deps.db.update(uuid, expected_task_state=task_state, action=action,
                       task_state=states.IMAGE_UPLOADING)
        current = states.IMAGE_UPLOADING
        workdir = os.path.join(deps.conf.state_path, 'snapshots')
        with disk_snapshot.disk_contents(deps.driver, uuid, disk,
                                         workdir) as data:
            client.upload(image_id, data)
    except Exception as exc:
        LOG.warning('instance %s: %s failed: %s', uuid, action, exc)
        if image_id is not None:
            client.delete_quietly(image_id)
        _end_task(deps, uuid, current)
        raise
    _end_task(deps, uuid, current)
    LOG.info('instance %s: %s uploaded as image %s (%s, from %s)', uuid,
             action, image_id, disk.disk_format, disk.path or 'no disk file')
    return ImageResult(image_id, client.image_url(image_id))


def snapshot(deps: ComputeDeps, ctx: RequestContext, uuid: str, name: str,
             metadata: dict[str, str]) -> ImageResult:
    """createImage: an image of the instance's root disk."""
    client = glance.get_client(ctx, deps.conf, 'createImage')
    return _snapshot(deps, ctx, client, uuid, 'snapshot',
                     states.IMAGE_SNAPSHOT, name, metadata,
                     {'image_type': 'snapshot'})


def backup(deps: ComputeDeps, ctx: RequestContext, uuid: str, name: str,
           backup_type: str, rotation: int,
           metadata: dict[str, str]) -> ImageResult:
    """createBackup: a backup image, then rotation."""
    client = glance.get_client(ctx, deps.conf, 'createBackup')
    result = _snapshot(deps, ctx, client, uuid, 'backup', states.IMAGE_BACKUP,
                       name, metadata, {'image_type': 'backup',
                                        'backup_type': backup_type})
    try:
        rotate_backups(client, uuid, backup_type, rotation, result.image_id)
    except glance.ImageServiceError as exc:
        raise glance.ImageServiceError(
            'Backup image %s was uploaded, but deleting the backups beyond '
            'rotation %d failed: %s' % (result.image_id, rotation, exc),
            status_code=exc.status_code) from exc
    return result


def rotate_backups(client: glance.GlanceClient, instance_uuid: str,
                   backup_type: str, rotation: int, newest: str) -> list[str]:
    """Delete the instance's backups of ``backup_type`` beyond the
    ``rotation`` newest, ``newest`` counted first; the ids deleted."""
    filters = {'instance_uuid': instance_uuid, 'image_type': 'backup',
               'backup_type': backup_type}
    # Checked here as well: an image service that ignored a filter must
    # not make rotation delete other images.
    images = [image for image in client.list(filters)
              if all(image.get(k) == v for k, v in filters.items())]
    images.sort(key=lambda image: image['id'] != newest)  # stable
    deleted = []
    for image in images[rotation:]:
        LOG.info('instance %s: rotation %d deletes backup %s', instance_uuid,
                 rotation, image['id'])
        client.delete(image['id'])
        deleted.append(image['id'])
    return deleted
