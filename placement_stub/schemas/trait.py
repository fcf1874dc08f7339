"""Body of PUT /resource_providers/{uuid}/traits."""

from placement_stub.schemas import common

SET_TRAITS_FOR_RP_SCHEMA = {
    'type': 'object',
    'properties': {
        'traits': {'type': 'array', 'items': common.NAME,
                   'uniqueItems': True},
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}

LIST_TRAIT_SCHEMA = {
    'type': 'object',
    'properties': {'name': {'type': 'string'},
                   'associated': {'type': 'string'}},
    'additionalProperties': False,
}
