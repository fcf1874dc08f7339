"""The identity file of the http_basic strategy (cyborg-lite's API and
the placement stub): user name -> project, user, roles, service roles.

It has only YAML to import, so that a service reading it loads nothing
else of cyborg-lite.
"""

import yaml

IDENTITY_KEYS = frozenset({'project_id', 'user_id', 'roles',
                           'service_roles'})


def read(path) -> dict:
    """The users of an http_basic identity file, checked, so that no
    entry silently means something else: user names are strings (YAML
    reads an unquoted ``no``, ``yes``, ``on``, ``off``, ``null`` or a
    number as another type, which would never match the name a client
    sends), ``project_id`` and ``user_id`` are strings, ``roles`` and
    ``service_roles`` lists of strings. ValueError says what is wrong
    (the service does not start)."""
    with open(path) as f:
        entries = yaml.safe_load(f) or {}
    if not isinstance(entries, dict):
        raise ValueError('%s: not a mapping of user names' % path)
    for user, entry in entries.items():
        if not isinstance(user, str):
            raise ValueError('%s: user name %r is not a string; quote it'
                             % (path, user))
        entry = entry or {}
        if not isinstance(entry, dict):
            raise ValueError('%s: the entry of user %s is not a mapping'
                             % (path, user))
        unknown = set(entry) - IDENTITY_KEYS
        if unknown:
            raise ValueError('%s: unknown keys %s for user %s'
                             % (path, sorted(unknown), user))
        for key in ('project_id', 'user_id'):
            if key in entry and not isinstance(entry[key], str):
                raise ValueError('%s: %s of user %s is not a string; '
                                 'quote it' % (path, key, user))
        for key in ('roles', 'service_roles'):
            value = entry.get(key, [])
            if not (isinstance(value, list) and
                    all(isinstance(v, str) for v in value)):
                raise ValueError('%s: %s of user %s is not a list of '
                                 'strings' % (path, key, user))
    return entries
