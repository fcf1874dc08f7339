"""Bodies of PUT /allocations/{consumer} and POST /allocations.

One schema per microversion that changed the body: 1.0 (a list), 1.8
(project and user required), 1.12 (a dict by provider), 1.28 (consumer
generation; empty allocations delete), 1.34 (the candidate's
``mappings``, accepted and not kept, as in Placement) and 1.38 (consumer
type). POST takes, from 1.13, a dict of such bodies by consumer, whose
allocations may be empty from the start.
"""

import copy

from placement_stub.schemas import common

# Stricter than Placement: an amount above MAX_INT is a 400 (PostgreSQL
# refuses it in the 32-bit column, a 500 in Placement).
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

# What POST takes per consumer: allocations may be empty (to clear them).
DELETABLE_ALLOCATIONS = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_12)
DELETABLE_ALLOCATIONS['properties']['allocations']['minProperties'] = 0

PUT_ALLOCATION_SCHEMA_V1_28 = copy.deepcopy(DELETABLE_ALLOCATIONS)
PUT_ALLOCATION_SCHEMA_V1_28['properties']['consumer_generation'] = {
    'type': ['integer', 'null'], 'minimum': 0}
PUT_ALLOCATION_SCHEMA_V1_28['required'].append('consumer_generation')

# Request group suffix -> the providers that satisfied it (the pattern
# is searched, not anchored, as in Placement).
MAPPINGS = {
    'type': 'object', 'minProperties': 1,
    'patternProperties': {'[a-zA-Z0-9_-]{1,64}': {
        'type': 'array', 'minItems': 1, 'items': common.UUID}},
}

PUT_ALLOCATION_SCHEMA_V1_34 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_28)
PUT_ALLOCATION_SCHEMA_V1_34['properties']['mappings'] = MAPPINGS

PUT_ALLOCATION_SCHEMA_V1_38 = copy.deepcopy(PUT_ALLOCATION_SCHEMA_V1_34)
PUT_ALLOCATION_SCHEMA_V1_38['properties']['consumer_type'] = common.NAME
PUT_ALLOCATION_SCHEMA_V1_38['required'].append('consumer_type')


def _post(put_schema):
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {common.UUID_PATTERN: put_schema},
            'additionalProperties': False}


POST_ALLOCATIONS_V1_13 = _post(DELETABLE_ALLOCATIONS)
POST_ALLOCATIONS_V1_28 = _post(PUT_ALLOCATION_SCHEMA_V1_28)
POST_ALLOCATIONS_V1_34 = _post(PUT_ALLOCATION_SCHEMA_V1_34)
POST_ALLOCATIONS_V1_38 = _post(PUT_ALLOCATION_SCHEMA_V1_38)
