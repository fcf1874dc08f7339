"""HTTP helpers of the compute API: JSON bodies, Nova's error body,
the request context from identity headers, the compute microversion,
and what every request must be before it is routed.

Bad input is a 4xx in Nova's error body, never a 500:

* a path or query string that is not UTF-8, or holds a NUL: 400;
* a ``Content-Type`` Nova does not read as JSON: 415 (``badMediaType``,
  as Nova). Like Nova, an absent type and ``text/plain`` (the default
  of some HTTP libraries) are read as JSON;
* a body that is not JSON in UTF-8, nested deeper than the decoder
  goes, or with a string that no database stores (a NUL, an unpaired
  surrogate): 400.

The request's context (who calls, and what the policy lets them do) is
built once by the API (``nova_shim.api.auth``) and read here.
"""

import datetime
import json

from oslo_utils import timeutils
import webob

from lite_common import request_text
from lite_common import storable_text

from nova_shim.context import RequestContext
from nova_shim import exception

MIN_VERSION = '2.1'
# What Nova reads as a JSON body; an absent type and text/plain as well.
JSON_TYPES = frozenset({'application/json',
                        'application/vnd.openstack.compute+json'})
UNTYPED = frozenset({'', 'text/plain'})
MAX_VERSION = '2.96'
# Where the API puts the request's microversion, as a (major, minor) tuple.
VERSION_KEY = 'nova_shim.api_version'
# Where the API puts the request's context.
CONTEXT_KEY = 'nova.context'


def error_response(status: int, key: str, message: str) -> webob.Response:
    return json_response({key: {'code': status, 'message': message}},
                         status)


def json_response(body: object, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.text = json.dumps(body)
    return resp


def request_error(environ: dict) -> webob.Response | None:
    """The 400 for a path or query string that is not UTF-8 or holds a
    NUL (``lite_common.request_text``), or None."""
    error = request_text.request_text_error(environ)
    if error is None:
        return None
    return error_response(400, 'badRequest', error)


def content_type_error(req: webob.Request) -> webob.Response | None:
    """Nova's 415 for a Content-Type it would not read as JSON, or
    None."""
    content_type = req.headers.get('Content-Type')
    if content_type is None:
        return None
    media_type = content_type.partition(';')[0].strip().lower()
    if media_type in JSON_TYPES or media_type in UNTYPED:
        return None
    return error_response(415, 'badMediaType', 'Unsupported Content-Type: '
                          '%s' % content_type[:100])


def view_args(req: webob.Request) -> dict:
    """What the views need of the request: the URL it came to (for
    links) and its microversion."""
    return {'base_url': req.application_url.rstrip('/'),
            'version': req.environ.get(VERSION_KEY, (2, 1))}


def request_context(req: webob.Request) -> RequestContext:
    """The caller's context, which the API built for this request."""
    return req.environ[CONTEXT_KEY]


def project_context(req: webob.Request) -> RequestContext:
    """The context of a request on servers, which must name a project
    or a scope: NotAuthenticated otherwise (a server, its ARQs and its
    allocation belong to a project; a token of a domain or of the
    system is refused by the policy instead)."""
    ctx = request_context(req)
    if not (ctx.project_id or ctx.domain_id or ctx.system_scope):
        raise exception.NotAuthenticated()
    return ctx


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
        raise exception.InvalidGlobalAPIVersion(
            req_ver=value, min_ver=MIN_VERSION, max_ver=MAX_VERSION)
    return version


def read_json(req: webob.Request) -> dict:
    """The body, a JSON object in UTF-8 (see the module's docstring)."""
    raw = req.body
    try:
        body = json.loads(raw.decode('utf-8-sig') or 'null')
    except ValueError as exc:
        raise exception.InvalidRequest(reason='malformed JSON') from exc
    except RecursionError as exc:
        raise exception.InvalidRequest(
            reason='malformed JSON: nested too deeply') from exc
    if not isinstance(body, dict):
        raise exception.InvalidRequest(reason='the body must be an object')
    reason = storable_text.unstorable(body, raw)
    if reason is not None:
        raise exception.InvalidRequest(reason=reason)
    return body


# -- query strings of the lists that page (Nova's ``limit``, ``marker``,
# ``changes-since``, ``changes-before``)

def query_value(req: webob.Request, name: str) -> str | None:
    """A query parameter given at most once; None when absent."""
    values = req.GET.getall(name)
    if len(values) > 1:
        raise exception.InvalidRequest(
            reason='"%s" may be given once' % name)
    return values[0] if values else None


def query_limit(req: webob.Request, max_limit: int) -> int:
    """``limit``: an integer of 0 or more, at most ``max_limit`` (its
    default, as Nova's ``[api] max_limit``)."""
    value = query_value(req, 'limit')
    if value is None:
        return max_limit
    if not (value.isascii() and value.isdigit()):
        raise exception.InvalidRequest(
            reason='"limit" is an integer of 0 or more')
    return min(int(value), max_limit)


def query_time(req: webob.Request, name: str) -> datetime.datetime | None:
    """An ISO 8601 time (``changes-since``), as naive UTC."""
    value = query_value(req, name)
    if value is None:
        return None
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError as exc:
        raise exception.InvalidRequest(
            reason='"%s" is an ISO 8601 time' % name) from exc

