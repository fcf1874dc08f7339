"""Strings that no database stores as text.

A decoded JSON value may hold a NUL (PostgreSQL refuses it in every text
column) or an unpaired surrogate (not a Unicode character, so not
encodable in UTF-8). Both can only reach a JSON body as ``\\u`` escapes.
cyborg-lite's API, the placement stub and nova_shim's compute API answer
such a body with a 400 instead of storing part of it or failing in the
database.
"""


def unstorable(value, raw: bytes | None = None) -> str | None:
    """Why the decoded JSON ``value`` holds a string that cannot be
    stored as text, or None when it holds none. Keys count. ``raw``, the
    UTF-8 JSON that ``value`` was decoded from, spares the search when it
    holds no ``\\u`` escape, the only way to write either."""
    if raw is not None and b'\\u' not in raw:
        return None
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if '\x00' in item:
                return 'a string holds a NUL character (\\u0000)'
            try:
                item.encode('utf-8')
            except UnicodeEncodeError:
                return ('a string holds an unpaired surrogate (\\ud800 to '
                        '\\udfff), which is not a Unicode character')
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None
