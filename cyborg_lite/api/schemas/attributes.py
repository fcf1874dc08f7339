"""Request bodies of /v2/attributes and /v2/deployables/{uuid}/program."""

# Deployable ids are 32-bit integers in the database.
DEPLOYABLE_ID_MAX = 2 ** 31 - 1

POST_ATTRIBUTE_SCHEMA_V2_0 = {
    'type': 'object',
    'properties': {
        # An integer, or its digits as a string: both ``openstack
        # accelerator device attribute create`` commands send the
        # command line's string. The controller checks the range of a
        # string's value.
        'deployable_id': {'type': ['integer', 'string'], 'minimum': 1,
                          'maximum': DEPLOYABLE_ID_MAX,
                          'pattern': '^[1-9][0-9]{0,9}$'},
        'key': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'value': {'type': 'string', 'maxLength': 255},
    },
    'required': ['deployable_id', 'key', 'value'],
    'additionalProperties': False,
}

PATCH_PROGRAM_SCHEMA_V2_0 = {
    'type': 'array',
    'minItems': 1,
    'maxItems': 1,
    'items': {
        'type': 'object',
        'properties': {
            'op': {'enum': ['replace']},
            'path': {'enum': ['/program']},
            'value': {
                'type': 'array', 'minItems': 1, 'maxItems': 1,
                'items': {
                    'type': 'object',
                    'properties': {'image_uuid': {'type': 'string',
                                                  'format': 'uuid'}},
                    'required': ['image_uuid'],
                    'additionalProperties': False,
                },
            },
        },
        'required': ['op', 'path', 'value'],
        'additionalProperties': False,
    },
}
