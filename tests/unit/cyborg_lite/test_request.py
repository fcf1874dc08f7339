"""How the API decodes a JSON body: UTF-8 only, and no string that a
database cannot store as text."""

import pytest

from cyborg_lite.api import request


@pytest.mark.parametrize('body,value', [
    (b'{"a": "b"}', {'a': 'b'}),
    (b'\xef\xbb\xbf{"a": 1}', {'a': 1}),                 # a byte order mark
    (b'["\\ud83d\\ude00"]', ['\U0001f600']),              # a surrogate pair
    (b'["caf\xc3\xa9", "caf\\u00e9"]', ['caf\u00e9'] * 2),
    (b'["\\\\u0000"]', ['\\u0000']),                     # an escaped backslash
    (b'{"k": [{"deep": "\\u0001"}]}', {'k': [{'deep': '\x01'}]}),
])
def test_decoded(body, value):
    assert request.decode_json(body) == value


@pytest.mark.parametrize('body,reason', [
    (b'["a\\u0000"]', 'NUL'),
    (b'{"a\\u0000": 1}', 'NUL'),
    (b'{"k": [{"v": ["\\u0000"]}]}', 'NUL'),
    (b'["\\ud800"]', 'surrogate'),
    (b'{"\\udfff": 1}', 'surrogate'),
    (b'["\\ude00\\ud83d"]', 'surrogate'),
])
def test_unstorable_strings_are_refused(body, reason):
    with pytest.raises(request.UnstorableString, match=reason):
        request.decode_json(body)


@pytest.mark.parametrize('body', [
    b'["\xed\xa0\x80"]', b'["\xc0\xaf"]', b'["\xff"]',
    '["x"]'.encode('utf-16'), b'["a\x00"]'])
def test_bodies_that_are_not_utf8_json_are_refused(body):
    with pytest.raises(ValueError):
        request.decode_json(body)
