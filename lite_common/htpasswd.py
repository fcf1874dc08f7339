"""Checking a user and password against an htpasswd file (bcrypt), for
the http_basic strategy of cyborg-lite's API and of the placement stub.

oslo.middleware's ``authenticate`` does
the check. It answers a user missing from the file at once, and a wrong
password only after a bcrypt comparison (tens to hundreds of ms at the
usual costs), so that the time of a 401 tells a caller which user names
exist. ``authenticate`` evens that out: a user the file does not
name costs a bcrypt comparison at the cost of the file's own entries.

Like ``lite_common.identity_file``, this module imports nothing else
of cyborg-lite.
"""

import functools
import re

import bcrypt
from oslo_middleware import basic_auth
import webob.exc

# "$2b$12$..." : the cost is the number between the second and third $.
_COST = re.compile(r'^\$2[abxy]?\$(\d\d)\$')
DEFAULT_COST = 12


def authenticate(user_file, username, password):
    """oslo.middleware's check: the WSGI environment values of the user.

    Raises what it raises: ``HTTPUnauthorized`` (an unknown user or a
    wrong password, each after one bcrypt comparison),
    ``HTTPBadRequest`` (the file cannot be read), ``ValueError`` (a
    password over bcrypt's 72 bytes, for a known user and an unknown
    one alike).
    """
    try:
        return basic_auth.authenticate(user_file, username, password)
    except webob.exc.HTTPUnauthorized:
        cost = _cost_if_unknown(user_file, username)
        if cost is not None:
            # The comparison a known user's wrong password costs; its
            # answer does not matter.
            bcrypt.checkpw(password, _dummy_hash(cost))
        raise


def _cost_if_unknown(user_file, username):
    """The bcrypt cost of the file's first entry if ``username`` has no
    entry (None if it has one), read the way oslo.middleware reads it."""
    prefix = username + ':'
    cost = None
    try:
        with open(user_file) as f:
            for line in f:
                entry = line.strip()
                if entry.startswith(prefix):
                    return None
                if cost is None and ':' in entry:
                    match = _COST.match(entry.split(':', 1)[1])
                    cost = int(match.group(1)) if match else None
    except OSError:
        # oslo.middleware read it a moment ago; whatever happened since,
        # the answer is a 401 either way.
        pass
    return DEFAULT_COST if cost is None else cost


@functools.lru_cache(maxsize=4)
def _dummy_hash(cost):
    # bcrypt takes costs from 4 to 31.
    rounds = max(4, min(cost, 31))
    return bcrypt.hashpw(b'not a password', bcrypt.gensalt(rounds=rounds))
