"""Request bodies of /v2/device_profiles."""

_GROUP = {
    'type': 'object',
    'minProperties': 1,
    'maxProperties': 64,
    'propertyNames': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'additionalProperties': {'type': 'string', 'maxLength': 255},
}

_PROFILE = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                 'pattern': '^[a-zA-Z0-9-_]+$'},
        'description': {'type': ['string', 'null'], 'maxLength': 255},
        'uuid': {'type': 'string', 'format': 'uuid'},
        'groups': {'type': 'array', 'minItems': 1, 'maxItems': 64,
                   'items': _GROUP},
    },
    'required': ['name', 'groups'],
    'additionalProperties': False,
}

POST_DEVICE_PROFILE_SCHEMA_V2_0 = {
    'type': 'array',
    'minItems': 1,
    'maxItems': 1,
    'items': _PROFILE,
}
