"""The ``createImage`` and ``createBackup`` server actions: their bodies,
as Nova's schemas check them, and their answers.

``{"createImage": {"name": ..., "metadata": {...}}}`` and
``{"createBackup": {"name": ..., "backup_type": ..., "rotation": N,
"metadata": {...}}}`` (``rotation`` an integer >= 0, or a string of
digits; ``metadata`` optional). A body that is not so is a 400.

Both answer 202 (``ImageResponse``): from microversion 2.45 with
``{"image_id": ...}``, before it with no body and the image's URL in
``Location`` (a backup only when ``rotation`` > 0, as Nova). The URL is
the image in Glance's v2 API (``<endpoint>/v2/images/<id>``): nova_shim
has no ``/images`` proxy API to point at.

Errors, in Nova's error body: no image service configured, 400
(badRequest); the instance in a state that does not allow the action,
409 (from ``power.begin``); Glance refusing the request as bad
(400, 409, 413), 400; refusing it as not allowed (401, 403), 403;
Glance unreachable or failing otherwise (5xx, an image gone meanwhile),
503 (serviceUnavailable). The message says what Glance answered.
"""

import re

import webob

from nova_shim.api import http
from nova_shim.compute.manager import ComputeManager
from nova_shim.compute.snapshot import ImageResult
from nova_shim.context import RequestContext
from nova_shim import exception
from nova_shim.image import glance

# Microversion from which the answer is {"image_id": ...}.
IMAGE_ID_BODY_VERSION = (2, 45)
MAX_LENGTH = 255
# Nova's parameter_types.metadata: its keys, and values up to 255.
_METADATA_KEY = re.compile(r'^[a-zA-Z0-9-_:. ]{1,255}$')
_DIGITS = re.compile(r'^[0-9]+$')


class ImageResponse(webob.Response):
    """The 202 of createImage and createBackup. Its form depends on the
    request's microversion, which the API keeps in the WSGI environ
    (``http.VERSION_KEY``): it is chosen when the response is served."""

    def __init__(self, image_id: str, image_url: str | None) -> None:
        super().__init__(status=202)
        self.image_id = image_id
        self.image_url = image_url

    def __call__(self, environ, start_response):
        if environ.get(http.VERSION_KEY, (2, 1)) >= IMAGE_ID_BODY_VERSION:
            self.content_type = 'application/json'
            self.charset = 'utf-8'
            self.json_body = {'image_id': self.image_id}
        elif self.image_url:
            self.headers['Location'] = self.image_url
        return super().__call__(environ, start_response)


def _bad(reason: str) -> exception.InvalidRequest:
    return exception.InvalidRequest(reason=reason)


def _entity(action: str, args: object, required: tuple[str, ...],
            optional: tuple[str, ...] = ('metadata',)) -> dict:
    if not isinstance(args, dict):
        raise _bad('"%s" must be an object' % action)
    missing = [key for key in required if key not in args]
    if missing:
        raise _bad('"%s" needs %s' % (action, ', '.join(
            '"%s"' % key for key in missing)))
    extra = sorted(set(args) - set(required) - set(optional))
    if extra:
        raise _bad('"%s" takes no %s' % (action, ', '.join(
            '"%s"' % key for key in extra)))
    return args


def _name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad('"name" must be a non-empty string')
    if len(value) > MAX_LENGTH:
        raise _bad('"name" is longer than %d characters' % MAX_LENGTH)
    if value != value.strip():
        raise _bad('"name" has leading or trailing whitespace')
    return value


def _metadata(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad('"metadata" must be an object')
    for key, item in value.items():
        if not _METADATA_KEY.match(key):
            raise _bad('metadata key %r is not 1 to 255 of letters, digits '
                       'and "-_:. "' % key[:300])
        if not isinstance(item, str) or len(item) > MAX_LENGTH:
            raise _bad('metadata %r must be a string of up to %d '
                       'characters' % (key, MAX_LENGTH))
    return dict(value)


def _rotation(value: object) -> int:
    if isinstance(value, bool) or not (
            isinstance(value, int) or
            isinstance(value, str) and _DIGITS.match(value)):
        raise _bad('"rotation" must be an integer of 0 or more, not %s'
                   % str(value)[:100])
    rotation = int(value)
    if rotation < 0:
        raise _bad('"rotation" must be an integer of 0 or more, not %d'
                   % rotation)
    return rotation


def _error(exc: exception.NovaShimException) -> webob.Response:
    if isinstance(exc, glance.ImageServiceNotConfigured):
        return http.error_response(400, 'badRequest', str(exc))
    if exc.status_code in (400, 409, 413):
        return http.error_response(400, 'badRequest', str(exc))
    if exc.status_code in (401, 403):
        return http.error_response(403, 'forbidden', str(exc))
    return http.error_response(503, 'serviceUnavailable', str(exc))


def create_image(manager: ComputeManager, ctx: RequestContext, uuid: str,
                 args: object) -> webob.Response:
    entity = _entity('createImage', args, ('name',))
    name, metadata = _name(entity['name']), _metadata(entity.get('metadata'))
    try:
        result: ImageResult = manager.snapshot_instance(ctx, uuid, name,
                                                        metadata)
    except (glance.ImageServiceNotConfigured,
            glance.ImageServiceError) as exc:
        return _error(exc)
    return ImageResponse(result.image_id, result.url)


def create_backup(manager: ComputeManager, ctx: RequestContext, uuid: str,
                  args: object) -> webob.Response:
    entity = _entity('createBackup', args, ('name', 'backup_type',
                                            'rotation'))
    name, metadata = _name(entity['name']), _metadata(entity.get('metadata'))
    if not isinstance(entity['backup_type'], str):
        raise _bad('"backup_type" must be a string')
    if len(entity['backup_type']) > MAX_LENGTH:
        raise _bad('"backup_type" is longer than %d characters' % MAX_LENGTH)
    rotation = _rotation(entity['rotation'])
    try:
        result: ImageResult = manager.backup_instance(
            ctx, uuid, name, entity['backup_type'], rotation, metadata)
    except (glance.ImageServiceNotConfigured,
            glance.ImageServiceError) as exc:
        return _error(exc)
    return ImageResponse(result.image_id, result.url if rotation else None)
