"""Body of PUT /resource_providers/{uuid}/aggregates."""

from placement_stub.schemas import common

PUT_AGGREGATES_SCHEMA_V1_1 = {
    'type': 'array', 'items': common.UUID, 'uniqueItems': True,
}

PUT_AGGREGATES_SCHEMA_V1_19 = {
    'type': 'object',
    'properties': {
        'aggregates': PUT_AGGREGATES_SCHEMA_V1_1,
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}
