"""JSON Schemas of request bodies, one module per resource, named by
method and microversion as Nova names them; ``validate`` checks a
body against one (a 400 in Nova's error body that says what is
wrong)."""

import jsonschema

from nova_shim import exception


def validate(schema: dict, body: object) -> None:
    """InvalidRequest (400) unless ``body`` matches ``schema``."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft7Validator(schema).iter_errors(body))
    if error is not None:
        where = '/'.join(str(p) for p in error.absolute_path) or 'the body'
        raise exception.InvalidRequest(
            reason='invalid input for %s: %s' % (where, error.message[:300]))
