"""Query string of GET /usages."""

import copy

from placement_stub.schemas import common

PROJECT_OR_USER = {'type': 'string', 'minLength': 1, 'maxLength': 255}

GET_USAGES_SCHEMA_V1_9 = {
    'type': 'object',
    'properties': {'project_id': PROJECT_OR_USER,
                   'user_id': PROJECT_OR_USER},
    'required': ['project_id'],
    'additionalProperties': False,
}

# ``all``, ``unknown`` or a consumer type name.
GET_USAGES_SCHEMA_V1_38 = copy.deepcopy(GET_USAGES_SCHEMA_V1_9)
GET_USAGES_SCHEMA_V1_38['properties']['consumer_type'] = {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    'pattern': common.CONSUMER_TYPE_GET_PATTERN,
}
