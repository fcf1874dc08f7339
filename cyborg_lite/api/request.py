"""The request object the Pecan app hands to hooks and controllers.

Pecan's own ``Request`` wraps every attribute access in a Python-level
``__getattribute__`` (to turn a ``UnicodeDecodeError`` into a 400), and
WebOb reads an attribute a few hundred times per request. This class
goes without it;
:func:`cyborg_lite.api.errors.status_and_message` maps a
``UnicodeDecodeError`` to 400 instead, wherever it is raised.

It also decodes a JSON body once. Routing (to merge the body's keys into
the controller's arguments), the nesting check of
:class:`~cyborg_lite.api.hooks.ServicesHook` and the controller's
validation all read it.
"""

import json

import webob

_DECODED_KEY = 'cyborg_lite.json_body'


class Request(webob.Request):

    @property
    def json(self):
        """The decoded JSON body, decoded on first use.

        Raises ``ValueError`` (``UnicodeDecodeError`` included) for a
        malformed body and ``RecursionError`` for one nested too deeply,
        every time it is read.
        """
        decoded = self.environ.get(_DECODED_KEY)
        if decoded is None:
            decoded = self.environ[_DECODED_KEY] = (json.loads(self.body),)
        return decoded[0]

    json_body = json
