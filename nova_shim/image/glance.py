"""Client for the Image API v2 (Glance), the calls Nova's
``nova/image/glance.py`` makes for snapshots and backups.

``get_client`` returns a ``GlanceClient`` over a keystoneauth1
adapter built from ``[glance]`` (service type ``image``), with the same
authentication modes as the other clients (``nova_shim.auth``). The
image service counts as configured when an endpoint can be found:
``endpoint_override``, or an ``auth_type`` whose service catalog has an
``image`` endpoint. Otherwise ``get_client`` raises
``ImageServiceNotConfigured`` before anything else happens.

As Nova does, a version suffix of the endpoint (``/v2``) is dropped and
the paths are ``/v2/images...`` under what remains. A failure raises
``ImageServiceError``, whose ``status_code`` is Glance's HTTP status
(None when it could not be reached) and whose message has Glance's own.
"""

import logging
import re
from typing import Any, BinaryIO

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
import requests

from nova_shim import auth
from nova_shim.context import RequestContext
from nova_shim import exception

LOG = logging.getLogger(__name__)

GROUP = 'glance'
_VERSION_SUFFIX = re.compile(r'/v\d+(\.\d+)?/?$')
# Pages followed when listing, at most (Glance's pages hold up to 1000).
MAX_PAGES = 1000


class ImageServiceNotConfigured(exception.NovaShimException):
    msg_fmt = ('No image service is configured, so %(action)s cannot '
               'run: set [glance] endpoint_override (with auth_type none '
               'for a noauth Glance), or an auth_type whose service '
               'catalog has an "image" endpoint.')


class ImageServiceError(exception.NovaShimException):
    msg_fmt = 'Image service request %(method)s %(path)s failed: %(msg)s'


def decode_error(response: requests.Response) -> str:
    """Glance's message: ``{"message": ...}`` (webob's JSON error) or
    ``{"error": {"message": ...}}`` (keystonemiddleware), else the text,
    shortened."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        message = body.get('message')
        if not isinstance(message, str) and isinstance(body.get('error'),
                                                       dict):
            message = body['error'].get('message')
        if isinstance(message, str):
            return ' '.join(message.split())[:300]
    return ' '.join(response.text.split())[:300]


def get_client(context: RequestContext, conf: cfg.ConfigOpts,
               action: str = 'this request') -> 'GlanceClient':
    """A Glance client acting for ``context``; ImageServiceNotConfigured
    (naming ``action``) when no image endpoint can be found."""
    adapter = auth.load_adapter(
        conf, GROUP, auth.get_auth_plugin(conf, GROUP, context),
        global_request_id=context.request_id)
    try:
        endpoint = adapter.get_endpoint()
    except (ks_exc.EndpointNotFound, ks_exc.EmptyCatalog):
        endpoint = None
    except ks_exc.ClientException as exc:
        raise ImageServiceError(
            method='GET', path='(endpoint lookup)',
            msg='could not find the image endpoint: %s' % exc) from exc
    if not endpoint:
        raise ImageServiceNotConfigured(action=action)
    return GlanceClient(adapter, _VERSION_SUFFIX.sub('', endpoint)
                        .rstrip('/'))


class GlanceClient:
    """The Image API v2 calls of snapshots and backups."""

    def __init__(self, adapter, root: str) -> None:
        self._adapter = adapter
        self.root = root

    def image_url(self, image_id: str) -> str:
        return '%s/v2/images/%s' % (self.root, image_id)

    def _call(self, method: str, path: str, ok: tuple[int, ...],
              **kwargs: Any) -> requests.Response:
        headers = kwargs.pop('headers', {})
        headers.setdefault('Accept', 'application/json')
        try:
            url = path if '://' in path else self.root + path
            resp = self._adapter.request(url, method,
                                         headers=headers, **kwargs)
        except ks_exc.ClientException as exc:
            raise ImageServiceError(
                method=method, path=path.partition('?')[0],
                msg='could not reach the image service: %s' % exc) from exc
        if resp.status_code not in ok:
            raise ImageServiceError(
                method=method, path=path.partition('?')[0],
                msg='Glance returned %d: %s' % (resp.status_code,
                                                decode_error(resp)),
                status_code=resp.status_code)
        return resp

    def create(self, image: dict) -> dict:
        """``POST /v2/images``: a queued image record (201)."""
        return self._call('POST', '/v2/images', (201,), json=image).json()

    def upload(self, image_id: str, data: BinaryIO) -> None:
        """``PUT /v2/images/{id}/file``: the image's bytes (204)."""
        self._call('PUT', '/v2/images/%s/file' % image_id, (204,),
                   data=data, log=False,
                   headers={'Content-Type': 'application/octet-stream'})

    def add_member(self, image_id: str, project_id: str) -> None:
        """Share the image with a project (``POST .../members``)."""
        self._call('POST', '/v2/images/%s/members' % image_id, (200,),
                   json={'member': project_id})

    def list(self, filters: dict[str, str], sort_key: str = 'created_at',
             sort_dir: str = 'desc') -> list[dict]:
        """Every image that matches ``filters`` (properties included),
        following Glance's ``next`` links (paths under the root)."""
        params = dict(filters, sort_key=sort_key, sort_dir=sort_dir)
        resp = self._call('GET', '/v2/images', (200,), params=params)
        images: list[dict] = []
        seen: set[str] = set()
        for _page in range(MAX_PAGES):
            body = resp.json()
            images.extend(body.get('images', []))
            link = body.get('next')
            if not link or link in seen:
                break
            seen.add(link)
            resp = self._call('GET', link, (200,))
        return images

    def delete(self, image_id: str) -> bool:
        """Delete an image; False if it was already gone (404)."""
        resp = self._call('DELETE', '/v2/images/%s' % image_id, (204, 404))
        return resp.status_code == 204

    def delete_quietly(self, image_id: str) -> None:
        """Delete an image that a failed snapshot leaves; log failures."""
        try:
            self.delete(image_id)
        except ImageServiceError as exc:
            LOG.warning('Could not delete image %s: %s', image_id, exc)
