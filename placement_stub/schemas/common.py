"""Schema fragments shared by several resources."""

import re

import jsonschema

MAX_INT = 2147483647

UUID_PATTERN = (r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                r'[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')
# A uuid, with or without its dashes, checked as the "uuid" format (a
# bad one "Failed validating 'format'", as in Placement).
UUID = {'type': 'string', 'format': 'uuid'}

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())


@FORMAT_CHECKER.checks('uuid')
def is_uuid(instance) -> bool:
    """Whether a string is a uuid (dashes optional); other types pass,
    as the schema's ``type`` checks them."""
    if not isinstance(instance, str):
        return True
    return re.match(UUID_PATTERN, instance) is not None
NAME = {'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
CUSTOM_NAME = {'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$',
               'maxLength': 255}
GENERATION = {'type': 'integer', 'minimum': 0}
# A consumer type to filter usages by: a name, ``all`` or ``unknown``.
CONSUMER_TYPE_GET_PATTERN = '^([A-Z0-9_]+|all|unknown)$'
