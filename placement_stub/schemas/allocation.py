"""Bodies of PUT /allocations/{consumer} and POST /allocations."""

import copy

from placement_stub.schemas import common

RESOURCES = {
    'type': 'object', 'minProperties': 1,
    'patternProperties': {'^[A-Z0-9_]+$': {
        'type': 'integer', 'minimum': 1, 'maximum': common.MAX_INT}},
    'additionalProperties': False,
}
PROJECT_USER = {'type': 'string', 'minLength': 1, 'maxLength': 255}

PUT_ALLOCATION_SCHEMA_V1_0 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array', 'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {'uuid': common.UUID},
                        'required': ['uuid'],
                        'additionalProperties': False},
                    'resources': RESOURCES,
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False}},
        'project_id': PROJECT_USER,
        'user_id': PROJECT_USER,
    },
    'required': ['allocations'],
    'additionalProperties': False,
}

PUT_ALLOCATION_SCHEMA_V1_8 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_0)
PUT_ALLOCATION_SCHEMA_V1_8['required'] += ['project_id', 'user_id']

PUT_ALLOCATION_SCHEMA_V1_12 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_8)
PUT_ALLOCATION_SCHEMA_V1_12['properties']['allocations'] = {
    'type': 'object', 'minProperties': 1,
    'patternProperties': {common.UUID_PATTERN: {
        'type': 'object',
        'properties': {'resources': RESOURCES,
                       'generation': {'type': ['integer', 'null']}},
        'required': ['resources'],
        'additionalProperties': False}},
    'additionalProperties': False,
}

PUT_ALLOCATION_SCHEMA_V1_28 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_12)
PUT_ALLOCATION_SCHEMA_V1_28['properties']['allocations']['minProperties'] = 0
PUT_ALLOCATION_SCHEMA_V1_28['properties']['consumer_generation'] = {
    'type': ['integer', 'null'], 'minimum': 0}
PUT_ALLOCATION_SCHEMA_V1_28['required'].append('consumer_generation')

PUT_ALLOCATION_SCHEMA_V1_38 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_28)
PUT_ALLOCATION_SCHEMA_V1_38['properties']['consumer_type'] = common.NAME
PUT_ALLOCATION_SCHEMA_V1_38['required'].append('consumer_type')


def _post(put_schema):
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {common.UUID_PATTERN: put_schema},
            'additionalProperties': False}


POST_ALLOCATIONS_V1_13 = _post(PUT_ALLOCATION_SCHEMA_V1_12)
POST_ALLOCATIONS_V1_28 = _post(PUT_ALLOCATION_SCHEMA_V1_28)
POST_ALLOCATIONS_V1_38 = _post(PUT_ALLOCATION_SCHEMA_V1_38)
