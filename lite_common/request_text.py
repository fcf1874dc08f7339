"""The text of a request's path and query string, checked once.

A WSGI server hands the path and the query string over as text whose
characters are the request's bytes (latin-1, PEP 3333). WebOb decodes
them as UTF-8 when a handler reads them and raises
``UnicodeDecodeError`` on bytes that are not UTF-8 (overlong forms and
encoded surrogates included), which would leave as a 500; and
PostgreSQL refuses a NUL in every text column, so a NUL in a name, an
id or a filter would fail in the database. Both are the client's
mistake: each service answers them with a 400 in its own error format,
with the messages written here, before anything reads the request.

``path_text`` and ``query_text`` return ``(text, None)`` for good text
and ``(None, message)`` otherwise.
"""

import urllib.parse


def _checked(data: bytes, where: str) -> tuple[str | None, str | None]:
    try:
        text = data.decode('utf-8')
    except UnicodeError:
        return None, 'The %s is not valid UTF-8.' % where
    if '\x00' in text:
        return None, 'The %s holds a NUL character (%%00).' % where
    return text, None


def path_text(raw: str) -> tuple[str | None, str | None]:
    """``PATH_INFO`` (already percent-decoded by the server) as text."""
    try:
        data = raw.encode('latin-1')
    except UnicodeEncodeError:
        return None, 'The path is not valid UTF-8.'
    return _checked(data, 'path')


def query_text(raw: str) -> tuple[str | None, str | None]:
    """``QUERY_STRING`` decoded as WebOb decodes it: ``+`` for a space,
    then percent escapes, then UTF-8."""
    try:
        data = raw.encode('latin-1')
    except UnicodeEncodeError:
        return None, 'The query string is not valid UTF-8.'
    return _checked(urllib.parse.unquote_to_bytes(data.replace(b'+', b' ')),
                    'query string')


def request_text_error(environ: dict) -> str | None:
    """Why the request's path or query string is refused, or None."""
    _text, error = path_text(environ.get('PATH_INFO', ''))
    if error is None and environ.get('QUERY_STRING'):
        _text, error = query_text(environ['QUERY_STRING'])
    return error
