"""Bodies of the inventory calls."""

import copy

from placement_stub.schemas import common

BASE_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'total': {'type': 'integer', 'minimum': 1,
                  'maximum': common.MAX_INT},
        'reserved': {'type': 'integer', 'minimum': 0,
                     'maximum': common.MAX_INT},
        'min_unit': {'type': 'integer', 'minimum': 1,
                     'maximum': common.MAX_INT},
        'max_unit': {'type': 'integer', 'minimum': 1,
                     'maximum': common.MAX_INT},
        'step_size': {'type': 'integer', 'minimum': 1,
                      'maximum': common.MAX_INT},
        # Stricter than Placement, whose schema sets only the maximum: a
        # ratio of 0 (or less) leaves no capacity at all, which is what
        # ``reserved`` is for.
        'allocation_ratio': {'type': 'number', 'exclusiveMinimum': 0,
                             'maximum': 3.40282e38},
    },
    'required': ['total'],
    'additionalProperties': False,
}

PUT_INVENTORY_RECORD_SCHEMA = copy.deepcopy(BASE_INVENTORY_SCHEMA)
PUT_INVENTORY_RECORD_SCHEMA['properties']['resource_provider_generation'] = (
    common.GENERATION)
PUT_INVENTORY_RECORD_SCHEMA['required'].append('resource_provider_generation')

# POST needs no generation (Placement ignores one if sent).
POST_INVENTORY_SCHEMA = copy.deepcopy(PUT_INVENTORY_RECORD_SCHEMA)
POST_INVENTORY_SCHEMA['properties']['resource_class'] = common.NAME
POST_INVENTORY_SCHEMA['required'] = ['total', 'resource_class']

PUT_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': common.GENERATION,
        'inventories': {
            'type': 'object',
            'patternProperties': {'^[A-Z0-9_]+$': BASE_INVENTORY_SCHEMA},
            'additionalProperties': False,
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}
