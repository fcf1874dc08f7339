"""Body of POST /reshaper (1.30): new inventories of some providers and
the allocations of the consumers that move with them."""

import copy

from placement_stub.schemas import allocation
from placement_stub.schemas import common
from placement_stub.schemas import inventory


def _reshaper_schema(post_allocations):
    """The reshaper body whose allocations are ``post_allocations`` (a
    POST /allocations body, which may be empty here)."""
    allocations = copy.deepcopy(post_allocations)
    allocations['minProperties'] = 0
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'patternProperties': {
                    common.UUID_PATTERN: inventory.PUT_INVENTORY_SCHEMA},
                # Nothing to reshape without at least one provider.
                'minProperties': 1,
                'additionalProperties': False,
            },
            'allocations': allocations,
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


POST_RESHAPER_SCHEMA = _reshaper_schema(allocation.POST_ALLOCATIONS_V1_28)
POST_RESHAPER_SCHEMA_V1_34 = _reshaper_schema(
    allocation.POST_ALLOCATIONS_V1_34)
POST_RESHAPER_SCHEMA_V1_38 = _reshaper_schema(
    allocation.POST_ALLOCATIONS_V1_38)
