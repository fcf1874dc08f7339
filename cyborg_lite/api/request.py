"""The request object the Pecan app hands to hooks and controllers.

Pecan's own ``Request`` wraps every attribute access in a Python-level
``__getattribute__`` (to turn a ``UnicodeDecodeError`` into a 400), and
WebOb reads an attribute a few hundred times per request. This class
goes without it;
``cyborg_lite.api.errors.status_and_message`` maps a
``UnicodeDecodeError`` to 400 instead, wherever it is raised.

It also decodes a JSON body once. Routing (to merge the body's keys into
the controller's arguments), the nesting check of
``ServicesHook`` and the controller's
validation all read it.

A body is JSON in UTF-8 (RFC 8259), decoded strictly, and no string in
it (keys included) may hold what no database stores as text: a NUL
(PostgreSQL refuses it in every text column) or an unpaired surrogate
(not a Unicode character, so not encodable in UTF-8). Both can only be
written as ``\\u`` escapes in valid UTF-8 JSON, so only a body with an
escape is searched.
"""

import json

import webob

from lite_common import storable_text

_DECODED_KEY = 'cyborg_lite.json_body'


class UnstorableString(ValueError):
    """A string of the JSON body holds a NUL or an unpaired surrogate."""


def decode_json(body: bytes):
    """``body`` decoded as JSON in UTF-8: ``ValueError`` if it is not
    (``UnicodeDecodeError``, or ``UnstorableString``),
    ``RecursionError`` if it is nested too deeply."""
    # utf-8-sig: a leading byte order mark is ignored, as RFC 8259 allows.
    value = json.loads(body.decode('utf-8-sig'))
    reason = storable_text.unstorable(value, body)
    if reason is not None:
        raise UnstorableString(reason)
    return value


class Request(webob.Request):

    @property
    def json(self):
        """The decoded JSON body (``decode_json``), decoded on first
        use; a body it refuses raises every time it is read."""
        decoded = self.environ.get(_DECODED_KEY)
        if decoded is None:
            decoded = self.environ[_DECODED_KEY] = (decode_json(self.body),)
        return decoded[0]

    json_body = json
