"""Schema fragments shared by several resources."""

MAX_INT = 2147483647
UUID = {'type': 'string',
        'pattern': r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   r'[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'}
NAME = {'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
CUSTOM_NAME = {'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$',
               'maxLength': 255}
GENERATION = {'type': 'integer', 'minimum': 0}
