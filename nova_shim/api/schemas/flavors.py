"""Bodies of ``/flavors`` and ``/flavors/{id}/os-extra_specs``, as
Nova's schemas (``nova/api/openstack/compute/schemas``) take them."""

import copy

# A name of printable characters, not starting or ending with blanks.
NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': r'^(?!\s)[^\x00-\x1f\x7f]*(?<!\s)$'}
POSITIVE = {'type': ['integer', 'string'], 'pattern': '^[0-9]+$',
            'minimum': 1, 'maximum': 2147483647}
NON_NEGATIVE = dict(POSITIVE, minimum=0)
DESCRIPTION = {'type': ['string', 'null'], 'minLength': 0, 'maxLength': 255,
               'pattern': r'^[^\x00-\x1f\x7f]*$'}
BOOLEAN = {'type': ['boolean', 'string'],
           'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on',
                    'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false',
                    '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']}

CREATE = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {
                'name': NAME,
                'id': {'type': ['string', 'number', 'null'],
                       'minLength': 1, 'maxLength': 255,
                       'pattern': '^(?! )[a-zA-Z0-9. _-]+(?<! )$'},
                'ram': POSITIVE,
                'vcpus': POSITIVE,
                'disk': NON_NEGATIVE,
                'OS-FLV-EXT-DATA:ephemeral': NON_NEGATIVE,
                'swap': NON_NEGATIVE,
                'rxtx_factor': {'type': ['number', 'string'],
                                'pattern': r'^[0-9]+(\.[0-9]+)?$',
                                'exclusiveMinimum': 0},
                'os-flavor-access:is_public': BOOLEAN,
            },
            'required': ['name', 'ram', 'vcpus', 'disk'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}
# 2.55: a description.
CREATE_V255 = copy.deepcopy(CREATE)
CREATE_V255['properties']['flavor']['properties']['description'] = \
    DESCRIPTION
UPDATE_V255 = {
    'type': 'object',
    'properties': {'flavor': {
        'type': 'object', 'properties': {'description': DESCRIPTION},
        'required': ['description'], 'additionalProperties': False}},
    'required': ['flavor'],
    'additionalProperties': False,
}

# Extra specs: keys of letters, digits and -_:. and blanks, values
# strings, numbers or booleans (kept as strings) of up to 255.
SPEC_KEY = '^[a-zA-Z0-9-_:. ]{1,255}$'
SPEC_VALUE = {'type': ['string', 'number', 'boolean'], 'minLength': 0,
              'maxLength': 255}
EXTRA_SPECS_CREATE = {
    'type': 'object',
    'properties': {'extra_specs': {
        'type': 'object', 'patternProperties': {SPEC_KEY: SPEC_VALUE},
        'additionalProperties': False}},
    'required': ['extra_specs'],
    'additionalProperties': False,
}
EXTRA_SPEC_UPDATE = {
    'type': 'object',
    'patternProperties': {SPEC_KEY: SPEC_VALUE},
    'additionalProperties': False,
}
