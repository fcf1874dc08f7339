"""Query string of GET /allocation_candidates, per microversion.

Each parameter's last value is checked, as Placement checks it; the
parsing of the values (request groups, traits, aggregates) follows in
``placement_stub.request_groups``.
"""

import functools

NUMERIC_SUFFIX = '[1-9][0-9]*'
STRING_SUFFIX = '[a-zA-Z0-9_-]{1,64}'
GROUP_KEYS = ('resources', 'required', 'member_of', 'in_tree')
STRING = {'type': 'string'}
LIMIT = {'type': ['integer', 'string'], 'pattern': '^[1-9][0-9]*$',
         'minimum': 1, 'minLength': 1}


def _grouped_keys(version):
    """The request group keys with their suffix pattern (1.25+)."""
    suffix = STRING_SUFFIX if version >= (1, 33) else NUMERIC_SUFFIX
    keys = [key for key in GROUP_KEYS
            if key != 'in_tree' or version >= (1, 31)]
    return {'^%s(%s)?$' % (key, suffix): STRING for key in keys}


@functools.lru_cache(maxsize=None)
def get_schema(version) -> dict:
    """The query schema of the request's microversion (one object per
    version: validators are cached by schema)."""
    properties = {}
    schema = {'type': 'object', 'properties': properties,
              'additionalProperties': False}
    if version < (1, 25):
        properties['resources'] = STRING
        schema['required'] = ['resources']
        if version >= (1, 17):
            properties['required'] = STRING
        if version >= (1, 21):
            properties['member_of'] = STRING
    else:
        schema['patternProperties'] = _grouped_keys(version)
        properties['group_policy'] = {'type': 'string',
                                      'enum': ['none', 'isolate']}
    if version >= (1, 16):
        properties['limit'] = LIMIT
    if version >= (1, 35):
        properties['root_required'] = STRING
    if version >= (1, 36):
        properties['same_subtree'] = STRING
    return schema
