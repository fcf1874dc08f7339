"""The version documents, as Nova serves them, without credentials.

* ``GET /``: ``{"versions": [v2.0, v2.1]}``, each with its ``self``
  link, as keystoneauth's discovery reads it;
* ``GET /v2.1`` (and ``/v2.1/``): ``{"version": {...}}`` of v2.1, with
  its ``self`` and ``describedby`` links and ``media-types``;
* ``GET /v2``: the same of the legacy v2.0 (which nova_shim serves as
  v2.1, as Nova's own v2 compatibility does).

The links are built from the URL the request came in on (the WSGI
``SCRIPT_NAME`` included), as Nova's are.
"""

import copy

import webob

from nova_shim.api import http
from nova_shim.compute.manager import ComputeManager

DOCS = 'http://docs.openstack.org/'
VERSIONS = {
    'v2.0': {
        'id': 'v2.0', 'status': 'DEPRECATED', 'version': '',
        'min_version': '', 'updated': '2025-07-04T12:00:00Z',
        'links': [{'rel': 'describedby', 'type': 'text/html',
                   'href': DOCS}],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.compute+json;version=2'}],
    },
    'v2.1': {
        'id': 'v2.1', 'status': 'CURRENT', 'version': http.MAX_VERSION,
        'min_version': http.MIN_VERSION, 'updated': '2013-07-23T11:33:21Z',
        'links': [{'rel': 'describedby', 'type': 'text/html',
                   'href': DOCS}],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.compute+json;version=2.1'}],
    },
}
# The path each version is served under.
PATHS = {'v2.0': 'v2', 'v2.1': 'v2.1'}


def _href(req: webob.Request, version: str) -> str:
    return '%s/%s/' % (req.application_url.rstrip('/'), PATHS[version])


def versions(req: webob.Request, manager: ComputeManager) -> webob.Response:
    """The document of the version the path names, or of all of them at
    the root."""
    path = req.path_info.rstrip('/')
    if path in ('/v2.1', '/v2'):
        version = 'v2.1' if path == '/v2.1' else 'v2.0'
        document = copy.deepcopy(VERSIONS[version])
        document['links'].insert(0, {'rel': 'self',
                                     'href': _href(req, version)})
        return http.json_response({'version': document})
    return http.json_response({'versions': [{
        'id': doc['id'], 'status': doc['status'], 'version': doc['version'],
        'min_version': doc['min_version'], 'updated': doc['updated'],
        'links': [{'rel': 'self', 'href': _href(req, version)}]}
        for version, doc in sorted(VERSIONS.items())]})
