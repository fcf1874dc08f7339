"""Bodies of POST and PUT /resource_providers."""

import copy

from placement_stub.schemas import common

POST_RESOURCE_PROVIDER_SCHEMA_V1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'minLength': 1, 'maxLength': 200},
        'uuid': common.UUID,
    },
    'required': ['name'],
    'additionalProperties': False,
}

POST_RESOURCE_PROVIDER_SCHEMA_V1_14 = copy.deepcopy(
    POST_RESOURCE_PROVIDER_SCHEMA_V1_0)
POST_RESOURCE_PROVIDER_SCHEMA_V1_14['properties']['parent_provider_uuid'] = {
    'anyOf': [common.UUID, {'type': 'null'}]}

PUT_RESOURCE_PROVIDER_SCHEMA_V1_0 = copy.deepcopy(
    POST_RESOURCE_PROVIDER_SCHEMA_V1_0)
del PUT_RESOURCE_PROVIDER_SCHEMA_V1_0['properties']['uuid']

PUT_RESOURCE_PROVIDER_SCHEMA_V1_14 = copy.deepcopy(
    POST_RESOURCE_PROVIDER_SCHEMA_V1_14)
del PUT_RESOURCE_PROVIDER_SCHEMA_V1_14['properties']['uuid']
