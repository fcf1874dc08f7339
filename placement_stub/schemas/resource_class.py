"""Bodies of POST and (before 1.7) PUT /resource_classes."""

from placement_stub.schemas import common

POST_RC_SCHEMA_V1_2 = {
    'type': 'object',
    'properties': {'name': common.CUSTOM_NAME},
    'required': ['name'],
    'additionalProperties': False,
}

# Before 1.7, PUT renamed a custom class; from 1.7 it has no body.
PUT_RC_SCHEMA_V1_2 = POST_RC_SCHEMA_V1_2
