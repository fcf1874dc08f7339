"""Request bodies of /v2/accelerator_requests."""

_UUID = {'type': 'string', 'format': 'uuid'}

POST_ARQ_SCHEMA_V2_0 = {
    'type': 'object',
    'properties': {
        'device_profile_name': {'type': 'string', 'maxLength': 255},
        # Accepted and ignored, as upstream ("for the future").
        'device_profile_group_id': {'type': ['integer', 'string', 'null']},
        'image_uuid': {'type': ['string', 'null'], 'maxLength': 36},
    },
    'required': ['device_profile_name'],
    'additionalProperties': False,
}


def _patch_op(paths):
    return {
        'type': 'object',
        'properties': {
            'op': {'enum': ['add', 'remove']},
            'path': {'enum': paths},
            'value': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        },
        'required': ['op', 'path'],
        'additionalProperties': False,
    }


def _patch_body(paths):
    return {
        'type': 'object',
        'minProperties': 1,
        'maxProperties': 256,
        'propertyNames': {'format': 'uuid'},
        'additionalProperties': {
            'type': 'array', 'minItems': 1, 'maxItems': 8,
            'items': _patch_op(paths),
        },
    }


BIND_PATHS_V2_0 = ['/hostname', '/device_rp_uuid', '/instance_uuid']
BIND_PATHS_V2_1 = BIND_PATHS_V2_0 + ['/project_id']

# /project_id in a patch below 2.1 is refused with 406, not 400, so the
# 2.0 schema accepts it and the controller checks the version.
PATCH_ARQ_SCHEMA_V2_0 = _patch_body(BIND_PATHS_V2_1)
