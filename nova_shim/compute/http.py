"""HTTP helpers of the compute API: JSON bodies, Nova's error body,
the request context from identity headers, the compute microversion."""

import json

import webob

from nova_shim.context import RequestContext
from nova_shim import exception

MIN_VERSION = '2.1'
MAX_VERSION = '2.96'
# Where the API puts the request's microversion, as a (major, minor) tuple.
VERSION_KEY = 'nova_shim.api_version'


def error_response(status: int, key: str, message: str) -> webob.Response:
    return json_response({key: {'code': status, 'message': message}},
                         status)


def json_response(body: object, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.text = json.dumps(body)
    return resp


def request_context(req: webob.Request) -> RequestContext:
    roles = [r.strip() for r in req.headers.get('X-Roles', '').split(',')
             if r.strip()]
    service_roles = [r.strip() for r in
                     req.headers.get('X-Service-Roles', '').split(',')
                     if r.strip()]
    return RequestContext(
        user_id=req.headers.get('X-User-Id'),
        project_id=req.headers.get('X-Project-Id',
                                   req.headers.get('X-Tenant-Id')),
        roles=roles or ['member', 'reader'],
        auth_token=req.headers.get('X-Auth-Token'),
        service_token=req.headers.get('X-Service-Token'),
        service_roles=service_roles)


def _version_tuple(value: str) -> tuple[int, int]:
    major, minor = value.split('.')
    return int(major), int(minor)


def request_version(req: webob.Request) -> tuple[int, int]:
    """The compute microversion asked for; 2.1 when none is."""
    value = None
    header = req.headers.get('OpenStack-API-Version', '')
    for part in header.split(','):
        words = part.split()
        if len(words) == 2 and words[0].lower() == 'compute':
            value = words[1]
    value = value or req.headers.get('X-OpenStack-Nova-API-Version')
    if not value:
        return _version_tuple(MIN_VERSION)
    if value == 'latest':
        return _version_tuple(MAX_VERSION)
    try:
        version = _version_tuple(value)
    except ValueError as exc:
        raise exception.InvalidRequest(
            reason='bad microversion %r' % value) from exc
    if not (_version_tuple(MIN_VERSION) <= version
            <= _version_tuple(MAX_VERSION)):
        raise exception.InvalidRequest(
            reason='microversion %s is not supported' % value)
    return version


def read_json(req: webob.Request) -> dict:
    try:
        body = json.loads(req.body or b'null')
    except ValueError as exc:
        raise exception.InvalidRequest(reason='malformed JSON') from exc
    if not isinstance(body, dict):
        raise exception.InvalidRequest(reason='the body must be an object')
    return body
