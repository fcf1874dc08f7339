"""The all-in-one's Image API: the part of Glance v2 that the compute
side and its clients use.

``openstack server create --image NAME`` looks the image up, and
nova_shim's ``createImage`` and ``createBackup`` upload snapshots; the
all-in-one serves both from here, with a few named images seeded (their
ids stable, as their names). Images and their bytes live under the
state directory (``images/``), so they outlast a restart:

* ``GET /``: the version document (``v2.x``, as keystoneauth discovers
  Glance's);
* ``GET /v2/images``: filters on any attribute given in the query
  (``name=...``), ``sort_key``/``sort_dir``, pages of ``limit`` with a
  ``next`` link (``marker``); ``GET /v2/images/{id}``;
* ``POST /v2/images``: 201 with a queued image; every attribute that is
  not Glance's own is an extra property, at the top level; a reserved
  one (``id``, ``status``, ...) is a 403, as in Glance;
* ``PUT /v2/images/{id}/file`` (``application/octet-stream``): the
  bytes, and the image becomes active (204);
* ``DELETE /v2/images/{id}`` (204), ``POST /v2/images/{id}/members``.

Bad input is a 4xx in Glance's error body, never a 500. There is no
authentication: the all-in-one serves on loopback, as its other open
services, and the owner of a new image is the caller's project
(``X-Project-Id``), or ``admin``.
"""

import datetime
import json
import os
import threading
import urllib.parse
import uuid

import webob
import webob.dec

RESERVED = frozenset({'id', 'status', 'size', 'virtual_size', 'checksum',
                      'os_hash_algo', 'os_hash_value', 'created_at',
                      'updated_at', 'file', 'schema', 'self', 'locations',
                      'direct_url', 'owner'})
LIST_PARAMS = frozenset({'limit', 'marker', 'sort_key', 'sort_dir'})
PAGE_SIZE = 25
# The largest image uploaded (a snapshot of a test-driver guest is
# small).
MAX_IMAGE_SIZE = 256 << 20
# The images a fresh all-in-one has: name -> disk format.
SEEDED = {'cirros-0.6.2-x86_64-disk': 'qcow2', 'ubuntu-24.04': 'qcow2'}


def seeded_id(name: str) -> str:
    """The stable id of a seeded image."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, 'image.' + name))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')


class ImageAPI:
    """The Image API over a directory (``None``: in memory only), with
    the ``SEEDED`` images unless ``seed`` is false."""

    page_size = PAGE_SIZE

    def __init__(self, directory: str | None = None,
                 seed: bool = True) -> None:
        self.directory = directory
        self.images: dict[str, dict] = {}
        self.data: dict[str, bytes] = {}
        self._lock = threading.Lock()
        if directory:
            os.makedirs(directory, exist_ok=True)
            self._load()
        if seed and not self.images:
            self._seed()

    def timestamp(self) -> str:
        """The time an image is created or changed, as Glance writes
        it."""
        return _now()

    # -- the store -------------------------------------------------------

    def _index(self) -> str:
        return os.path.join(self.directory, 'images.json')

    def _load(self) -> None:
        try:
            with open(self._index()) as f:
                self.images = json.load(f)
        except FileNotFoundError:
            return
        for image_id in self.images:
            path = os.path.join(self.directory, image_id)
            if os.path.exists(path):
                with open(path, 'rb') as f:
                    self.data[image_id] = f.read()

    def _save(self, image_id: str | None = None) -> None:
        """Write the index (and ``image_id``'s bytes); the caller holds
        the lock."""
        if not self.directory:
            return
        if image_id is not None and image_id in self.data:
            with open(os.path.join(self.directory, image_id), 'wb') as f:
                f.write(self.data[image_id])
        tmp = self._index() + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.images, f)
        os.replace(tmp, self._index())

    def _seed(self) -> None:
        created = self.timestamp()
        for name, disk_format in SEEDED.items():
            image_id = seeded_id(name)
            self.images[image_id] = self._view(
                image_id, {'name': name, 'disk_format': disk_format,
                           'container_format': 'bare',
                           'visibility': 'public'},
                owner='admin', created=created, status='active', size=0)
        with self._lock:
            self._save()

    @staticmethod
    def _view(image_id: str, attributes: dict, owner: str, created: str,
              status: str = 'queued', size: int | None = None) -> dict:
        image = {'visibility': 'shared', 'protected': False,
                 'min_disk': 0, 'min_ram': 0, 'tags': [],
                 'disk_format': None, 'container_format': None}
        image.update(attributes)
        image.update(id=image_id, status=status, size=size, owner=owner,
                     created_at=created, updated_at=created,
                     file='/v2/images/%s/file' % image_id,
                     self='/v2/images/%s' % image_id,
                     schema='/v2/schemas/image')
        return image

    # -- the API ---------------------------------------------------------

    @staticmethod
    def _json(body: object, status: int = 200) -> webob.Response:
        resp = webob.Response(status=status, content_type='application/json',
                              charset='utf-8')
        resp.text = json.dumps(body)
        return resp

    def _error(self, status: int, message: str) -> webob.Response:
        return self._json({'message': message, 'code': status,
                           'title': webob.Response(status=status).status},
                          status)

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> webob.Response:
        return self.dispatch(req)

    @staticmethod
    def route(req: webob.Request) -> tuple[str | None, str | None]:
        """``(kind, image_id)`` of a request: kind ``images``,
        ``image``, ``file`` or ``members``, or ``versions`` at ``/``;
        ``(None, None)`` for a path this API does not serve."""
        parts = req.path_info.strip('/').split('/')
        if parts == ['']:
            return 'versions', None
        if parts[:2] != ['v2', 'images'] or len(parts) > 4:
            return None, None
        image_id = parts[2] if len(parts) > 2 else None
        kind = 'images' if image_id is None else (
            parts[3] if len(parts) > 3 else 'image')
        return kind, image_id

    def dispatch(self, req: webob.Request) -> webob.Response:
        kind, image_id = self.route(req)
        if kind == 'versions' and req.method == 'GET':
            return self._versions(req)
        if kind in (None, 'versions'):
            return self._error(404, 'The resource could not be found.')
        handler = {('GET', 'images'): self._list,
                   ('POST', 'images'): self._create,
                   ('GET', 'image'): self._show,
                   ('DELETE', 'image'): self._delete,
                   ('PUT', 'file'): self._upload,
                   ('POST', 'members'): self._add_member}.get(
                       (req.method, kind))
        if handler is None:
            return self._error(405, 'The method is not allowed for this '
                                    'resource.')
        if image_id is None:
            return handler(req)
        if image_id not in self.images:
            return self._error(404, 'No image found with ID %s' % image_id)
        return handler(req, image_id)

    def _versions(self, req: webob.Request) -> webob.Response:
        return self._json({'versions': [{
            'id': 'v2.16', 'status': 'CURRENT',
            'links': [{'rel': 'self',
                       'href': req.application_url.rstrip('/') + '/v2/'}]}]})

    def _body(self, req: webob.Request) -> dict:
        try:
            body = json.loads(req.body or b'{}')
        except ValueError as exc:
            raise ValueError('The body is not JSON.') from exc
        if not isinstance(body, dict):
            raise ValueError('The body is not an object.')
        return body

    def _create(self, req: webob.Request) -> webob.Response:
        try:
            body = self._body(req)
        except ValueError as exc:
            return self._error(400, str(exc))
        reserved = sorted(RESERVED & set(body))
        if reserved:
            return self._error(403, "Attribute '%s' is reserved."
                               % reserved[0])
        image_id = str(uuid.uuid4())
        image = self._view(image_id, body,
                           owner=req.headers.get('X-Project-Id') or 'admin',
                           created=self.timestamp())
        with self._lock:
            self.images[image_id] = image
            self._save()
        return self._json(image, 201)

    def _upload(self, req: webob.Request, image_id: str) -> webob.Response:
        if req.content_type != 'application/octet-stream':
            return self._error(415, 'Unsupported Content-Type')
        with self._lock:
            self.data[image_id] = req.body
            self.images[image_id].update(status='active',
                                         size=len(req.body),
                                         updated_at=self.timestamp())
            self._save(image_id)
        return webob.Response(status=204)

    def _show(self, req: webob.Request, image_id: str) -> webob.Response:
        return self._json(self.images[image_id])

    def _delete(self, req: webob.Request, image_id: str) -> webob.Response:
        with self._lock:
            self.images.pop(image_id, None)
            self.data.pop(image_id, None)
            if self.directory:
                try:
                    os.remove(os.path.join(self.directory, image_id))
                except FileNotFoundError:
                    pass
            self._save()
        return webob.Response(status=204)

    def _add_member(self, req: webob.Request,
                    image_id: str) -> webob.Response:
        try:
            member = self._body(req)['member']
        except (ValueError, KeyError):
            return self._error(400, 'The body names no "member".')
        with self._lock:
            self.images[image_id].setdefault('members', []).append(member)
            self._save()
        return self._json({'image_id': image_id, 'member_id': member,
                           'status': 'pending'})

    def _list(self, req: webob.Request) -> webob.Response:
        query = dict(req.GET)
        filters = {k: v for k, v in query.items() if k not in LIST_PARAMS}
        key = query.get('sort_key', 'created_at')
        try:
            limit = min(int(query.get('limit', self.page_size)),
                        self.page_size)
        except ValueError:
            return self._error(400, 'limit is not a number')
        if limit < 1:
            return self._error(400, 'limit must be a positive number')
        with self._lock:
            found = [i for i in self.images.values()
                     if all(str(i.get(k)) == v for k, v in filters.items())]
        found.sort(key=lambda i: (str(i.get(key)), i['id']),
                   reverse=query.get('sort_dir', 'desc') == 'desc')
        if 'marker' in query:
            ids = [i['id'] for i in found]
            if query['marker'] not in ids:
                return self._error(400, 'marker not found')
            found = found[ids.index(query['marker']) + 1:]
        page = found[:limit]
        body = {'images': page, 'first': '/v2/images',
                'schema': '/v2/schemas/images'}
        if len(found) > limit:
            params = dict(query, marker=page[-1]['id'])
            body['next'] = '/v2/images?' + urllib.parse.urlencode(params)
        return self._json(body)

