"""Request body and parameter validation."""

import jsonschema
from oslo_utils import uuidutils

from cyborg_lite import exception

_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks('uuid')
def _is_uuid(value):
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


def json_body(request):
    """The decoded JSON body; Invalid for an empty or malformed one."""
    if not request.body:
        raise exception.Invalid(reason='The request has no JSON body.')
    try:
        return request.json
    except (ValueError, UnicodeDecodeError) as exc:
        raise exception.Invalid(reason='Malformed JSON body: %s' % exc)
    except RecursionError:
        # Nesting deep enough to exhaust the decoder, under the size limit.
        raise exception.Invalid(reason='Malformed JSON body: nested too '
                                       'deeply.')


def validate(body, schema):
    validator = jsonschema.Draft7Validator(schema, format_checker=_FORMATS)
    error = jsonschema.exceptions.best_match(validator.iter_errors(body))
    if error is not None:
        where = '/'.join(str(p) for p in error.absolute_path)
        raise exception.Invalid(reason='%s%s' % (
            'at %r: ' % where if where else '', error.message[:500]))
    return body


def uuid_param(value, name):
    if not uuidutils.is_uuid_like(value):
        raise exception.Invalid(reason='%s must be a UUID, not %r.' % (
            name, value[:64]))
    return value


def uuid_list_param(value, name):
    items = [v.strip() for v in value.split(',') if v.strip()]
    if not items:
        raise exception.Invalid(reason='%s must list at least one UUID.'
                                % name)
    return [uuid_param(v, name) for v in items]
