"""The one check of a request's path and query text, which the three
services' guards share."""

import pytest

from lite_common import request_text


def _wsgi(text_bytes: bytes) -> str:
    """Bytes as a WSGI server passes them (latin-1 text, PEP 3333)."""
    return text_bytes.decode('latin-1')


@pytest.mark.parametrize('raw,error', [
    (b'/v2/devices', None),
    ('/v2/café'.encode(), None),
    (b'/v2/\xff', 'The path is not valid UTF-8.'),
    # An overlong '/' and an encoded surrogate are not UTF-8 either.
    (b'/v2/\xc0\xaf', 'The path is not valid UTF-8.'),
    (b'/v2/\xed\xa0\x80', 'The path is not valid UTF-8.'),
    (b'/v2/a\x00b', 'The path holds a NUL character (%00).'),
])
def test_path_text(raw, error):
    text, message = request_text.path_text(_wsgi(raw))
    assert message == error
    assert text == (raw.decode() if error is None else None)


@pytest.mark.parametrize('raw,text,error', [
    ('name=a,b', 'name=a,b', None),
    ('a=caf%C3%A9', 'a=café', None),
    ('a=+b', 'a= b', None),
    ('%ff', None, 'The query string is not valid UTF-8.'),
    ('a=%c0%af', None, 'The query string is not valid UTF-8.'),
    ('a=%ed%a0%80', None, 'The query string is not valid UTF-8.'),
    ('a=%00', None, 'The query string holds a NUL character (%00).'),
])
def test_query_text(raw, text, error):
    assert request_text.query_text(raw) == (text, error)


def test_text_a_server_already_decoded_is_refused_not_raised():
    # Not latin-1: no WSGI server passes it, but an in-process caller
    # might; it is refused, never an exception.
    assert request_text.path_text('/v2/\u20ac')[1] == \
        'The path is not valid UTF-8.'
    assert request_text.query_text('a=\u20ac')[1] == \
        'The query string is not valid UTF-8.'


@pytest.mark.parametrize('environ,error', [
    ({'PATH_INFO': '/x'}, None),
    ({'PATH_INFO': '/x', 'QUERY_STRING': ''}, None),
    ({'PATH_INFO': _wsgi(b'/\xff'), 'QUERY_STRING': '%00'},
     'The path is not valid UTF-8.'),
    ({'PATH_INFO': '/x', 'QUERY_STRING': 'a=%00'},
     'The query string holds a NUL character (%00).'),
])
def test_request_text_error(environ, error):
    assert request_text.request_text_error(environ) == error
