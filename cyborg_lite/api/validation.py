"""Request body and parameter validation.

Bodies are checked against Draft 7 JSON Schemas in two steps. A schema is
compiled once per process by fastjsonschema into a plain Python function,
which decides whether a body is valid: a bind PATCH costs 6 us instead of
the 105 us of jsonschema's interpreter, which walks the schema anew on
every request. A body it refuses is then checked by jsonschema, whose
best-matching error is the one reported, so a client reads the same
message as before. Both must agree on every body: the tests compare
their verdicts on generated ones.
"""

import uuid

import fastjsonschema
import jsonschema
from oslo_utils import uuidutils

from cyborg_lite import exception
from cyborg_lite.api import request as api_request


def _is_uuid(value):
    """The ``uuid`` format: a value that is not a string passes it, as
    every format (fastjsonschema checks formats of strings only)."""
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


# The formats beyond Draft 7's, for both validators.
_CUSTOM_FORMATS = {'uuid': _is_uuid}
_FORMATS = jsonschema.FormatChecker()
for _name, _check in _CUSTOM_FORMATS.items():
    _FORMATS.checks(_name)(_check)

_compiled = {}     # id(schema) -> (schema, its compiled check)


def compiled(schema):
    """The compiled check of ``schema`` (a module-level constant): raises
    ``fastjsonschema.JsonSchemaException`` for an invalid body. Compiling
    twice in a race is harmless: both results are the same check."""
    entry = _compiled.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _compiled[id(schema)] = (schema, fastjsonschema.compile(
            schema, formats=_CUSTOM_FORMATS, use_default=False))
    return entry[1]


def json_body(request):
    """The decoded JSON body; Invalid for an empty or malformed one."""
    if not request.body:
        raise exception.Invalid(reason='The request has no JSON body.')
    try:
        return request.json
    except api_request.UnstorableString as exc:
        raise exception.Invalid(reason='The request body is refused: %s.'
                                % exc)
    except (ValueError, UnicodeDecodeError) as exc:
        raise exception.Invalid(reason='Malformed JSON body: %s' % exc)
    except RecursionError:
        # Nesting deep enough to exhaust the decoder, under the size limit.
        raise exception.Invalid(reason='Malformed JSON body: nested too '
                                       'deeply.')


def validate(body, schema):
    """``body`` if it is valid against ``schema``; Invalid otherwise."""
    try:
        compiled(schema)(body)
        return body
    except fastjsonschema.JsonSchemaException:
        pass
    validator = jsonschema.Draft7Validator(schema, format_checker=_FORMATS)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        where = '/'.join(str(p) for p in error.absolute_path)
        raise exception.Invalid(reason='%s%s' % (
            'at %r: ' % where if where else '', error.message[:500]))
    return body


def uuid_param(value, name):
    """``value`` in the canonical form of a UUID (36 characters, lower
    case), or Invalid. Any form oslo.utils takes for a UUID is accepted
    (braces, ``urn:uuid:``, other dashes, upper case), as upstream
    accepts them; stored as given, the longer ones would not fit their
    column, and the others would not match the same UUID sent as
    Nova sends it."""
    if not uuidutils.is_uuid_like(value):
        raise exception.Invalid(reason='%s must be a UUID, not %r.' % (
            name, value[:64]))
    return str(uuid.UUID(value))


def canonical_id(value):
    """A path's identifier: a UUID in any form oslo.utils takes, in the
    canonical form it is stored in (an upper-case or braced UUID finds
    the same object); anything else as given (it finds nothing: 404)."""
    if uuidutils.is_uuid_like(value):
        return uuid_param(value, 'id')
    return value


def uuid_list_param(value, name):
    items = [v.strip() for v in value.split(',') if v.strip()]
    if not items:
        raise exception.Invalid(reason='%s must list at least one UUID.'
                                % name)
    return [uuid_param(v, name) for v in items]
