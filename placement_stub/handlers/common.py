"""Helpers every handler uses: context, JSON in and out, version gates."""

import json
import time

import jsonschema
from oslo_serialization import jsonutils
import webob
import webob.exc

from lite_common import storable_text

from placement_stub.db import providers
from placement_stub import errors
from placement_stub import microversion as mv
from placement_stub.schemas import common as schema_common


def context(req):
    return req.environ['placement.context']


def version(req) -> tuple:
    return req.environ[mv.ENVIRON_KEY]


def require(req, predicate) -> None:
    """404 when the route does not exist at the request's version."""
    if not predicate(version(req)):
        raise errors.not_found('The resource could not be found.')


# What jsonutils.dump_as_bytes() writes, without the circular-reference
# check (a fifth of the encoding time of a large body): handlers build
# their bodies from fresh dicts and lists, with no cycles.
_ENCODER = json.JSONEncoder(check_circular=False,
                            default=jsonutils.to_primitive)


def json_response(body, status=200, headers=None) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.body = _ENCODER.encode(body).encode('utf-8')
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def no_content(status=204, headers=None) -> webob.Response:
    resp = webob.Response(status=status)
    resp.content_type = None
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def extract_json(req, schema):
    """The request body, parsed and validated against ``schema``.

    The body is UTF-8 (decoded strictly, as Placement does). JSON nested
    deeper than the decoder's recursion limit, and strings that no
    database stores (``lite_common.storable_text.unstorable``), are
    400s, where Placement fails with a 500.
    """
    if req.content_type != 'application/json':
        raise errors.http(webob.exc.HTTPUnsupportedMediaType,
                          'The media type %s is not supported, use '
                          'application/json' % (req.content_type or None))
    try:
        data = jsonutils.loads(req.body)
    except ValueError as exc:
        raise errors.bad_request('Malformed JSON: %s' % exc)
    except RecursionError:
        raise errors.bad_request('Malformed JSON: nested too deeply.')
    reason = storable_text.unstorable(data, req.body)
    if reason is not None:
        raise errors.bad_request('JSON does not validate: %s.' % reason)
    return validate_data(data, schema)


# {key: (schema, validator)}: the validator of each schema, made (and
# the schema checked) once per process. ``jsonschema.validate`` checks
# the schema against its meta-schema on every call: under a stream of
# provider writes that was 30 % of a worker's CPU.
_VALIDATORS = {}


def _validator(schema, key=None, format_checker=None):
    """The validator of ``schema``, which must live as long as the
    process (a module's constant, or one a cached function returns):
    it is found again by its id, or by ``key``."""
    key = key or id(schema)
    found = _VALIDATORS.get(key)
    if found is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = _VALIDATORS[key] = (schema, cls(
            schema, format_checker=format_checker))
    return found[1]


def _validate(instance, validator):
    """What ``jsonschema.validate`` does once its schema is checked:
    the best error of the instance, raised."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


def validate_data(data, schema):
    """``data``, or a 400 with the validator's whole report ("Failed
    validating 'maximum' in schema ..."), as Placement gives it."""
    try:
        _validate(data, _validator(
            schema, format_checker=schema_common.FORMAT_CHECKER))
    except jsonschema.ValidationError as exc:
        raise errors.bad_request('JSON does not validate: %s' % exc)
    return data


def validate_query(req, schema) -> None:
    """400 unless the query string (each parameter's last value) is valid
    against ``schema``, with the validator's report, as Placement."""
    try:
        _validate(dict(req.GET), _validator(
            schema, format_checker=schema_common.FORMAT_CHECKER))
    except jsonschema.ValidationError as exc:
        raise errors.bad_request('Invalid query string parameters: %s'
                                 % exc)


def validate_query_value(name, value, schema) -> None:
    """400 unless the query parameter ``name`` is valid against
    ``schema``, with the validator's report."""
    try:
        _validate({name: value}, _validator(
            {'type': 'object', 'properties': {name: schema}},
            key=(name, id(schema))))
    except jsonschema.ValidationError as exc:
        raise errors.bad_request('Invalid query string parameters: %s'
                                 % exc)


def cacheable(req, resp) -> webob.Response:
    """``resp`` with Placement's cache headers from 1.15, for body-less
    answers that have them (those with a body get them anyway)."""
    if mv.allow_cache_headers(version(req)):
        resp.headers['Cache-Control'] = 'no-cache'
        resp.last_modified = time.time()
    return resp


def provider_or_404(req, uuid) -> dict:
    return providers.get_provider(context(req), uuid)


def provider_links(req, rp, version_) -> list:
    base = req.script_name + '/resource_providers/' + rp['uuid']
    links = [{'rel': 'self', 'href': base},
             {'rel': 'inventories', 'href': base + '/inventories'},
             {'rel': 'usages', 'href': base + '/usages'}]
    if mv.allow_aggregates(version_):
        links.append({'rel': 'aggregates', 'href': base + '/aggregates'})
    if mv.allow_traits(version_):
        links.append({'rel': 'traits', 'href': base + '/traits'})
    if mv.allow_allocations_link(version_):
        links.append({'rel': 'allocations', 'href': base + '/allocations'})
    return links
