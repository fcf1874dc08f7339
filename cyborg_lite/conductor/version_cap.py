"""The newest conductor RPC API version a client may send, and the
older form each call takes below it (``[upgrade_levels] conductor``).

During a rolling upgrade the conductors are replaced one at a time,
while API servers and agents of either release keep calling them. A
client capped at the old release's version sends every call in a form
the old conductors serve: a call that gained arguments in a newer
version is sent in the older version without them (``OLDER_FORMS``), and
a call that has no older form is refused with ``ConductorTooOld`` (503
at the API) until the cap rises. Repeats after a fault that are safe
only because of a newer argument (an ARQ create's idempotency key) are
not made below that version (``SAFE_REPEAT_FROM``).

``auto`` asks a conductor for the versions that the running conductors
recorded (``conductor_versions``, RPC API 1.4; see
``cyborg_lite.db.services``) and keeps the oldest for the life of the
process, as Nova does with its ``auto``: the API servers are restarted
to raise it. A conductor older than 1.4 cannot answer, and records
nothing: its release is taken to be the one before the services table
(``UNRECORDED``).
"""

import logging
import threading

import oslo_messaging

from cyborg_lite import exception

LOG = logging.getLogger(__name__)

AUTO = 'auto'
# The version of the conductors that predate the services table.
UNRECORDED = '1.3'
# The version that answers conductor_versions.
RECORDING = '1.4'
# method -> (the older version, the arguments it lacks).
OLDER_FORMS = {
    'arq_create': ('1.0', ('idempotency_key',)),
    'arq_bind': ('1.0', ('repeat',)),
    'arq_delete': ('1.0', ('repeat',)),
    # Its calls take their own older forms.
    'call_batch': ('1.1', ()),
}
# method -> the version from which a repeat of a lost call is harmless
# (see cyborg_lite.conductor.retries).
SAFE_REPEAT_FROM = {'arq_create': '1.2', 'arq_bind': '1.2',
                    'arq_delete': '1.2'}
# A conductor that does not know the call it was sent, by the class
# name that RemoteError carries.
REFUSALS = ('UnsupportedVersion', 'NoSuchMethod')


def parse(version: str) -> tuple[int, int]:
    major, minor = version.split('.')
    return int(major), int(minor)


def at_most(version: str, cap: str | None) -> bool:
    """Whether ``version`` may be sent under ``cap`` (None: no cap)."""
    return cap is None or parse(version) <= parse(cap)


class VersionCap:
    """The cap of one RPC client. ``level``: the option's value (None,
    a version, or ``auto``); ``current``: this release's version;
    ``needed``: the version each method needs where it is not 1.0;
    ``ask``: a function that returns the running conductors' versions
    (``conductor_versions``), for ``auto``."""

    def __init__(self, level, current, needed, ask):
        self.level = level
        self.current = current
        self._needed = needed
        self._ask = ask
        self._lock = threading.Lock()
        self._resolved = None
        if level and level != AUTO:
            if parse(level) > parse(current):
                LOG.warning('[upgrade_levels] conductor = %s is newer than '
                            'this release\'s %s: sending at most %s',
                            level, current, current)
                level = current
            self._resolved = level
            LOG.info('Conductor RPC calls capped at %s ([upgrade_levels] '
                     'conductor)', level)

    def get(self) -> str | None:
        """The cap now: None when there is none."""
        if not self.level:
            return None
        if self._resolved is not None:
            return self._resolved
        with self._lock:
            if self._resolved is None:
                return self._resolve()
            return self._resolved

    def _resolve(self) -> str:
        try:
            found = self._ask()
        except oslo_messaging.RemoteError as exc:
            if exc.exc_type not in REFUSALS:
                raise
            self._resolved = UNRECORDED
            LOG.info('Conductor RPC calls capped at %s ([upgrade_levels] '
                     'conductor = auto): a conductor older than %s '
                     'answered', UNRECORDED, RECORDING)
            return self._resolved
        versions = [row['rpc_version'] for row in found]
        if not versions:
            # None recorded yet: this call goes in the oldest form that
            # any release with recorded versions serves, and the next
            # one asks again.
            return UNRECORDED
        oldest = min([self.current] + versions, key=parse)
        self._resolved = oldest
        LOG.info('Conductor RPC calls capped at %s ([upgrade_levels] '
                 'conductor = auto: %s)', oldest,
                 ', '.join('%(host)s %(rpc_version)s' % row
                           for row in found))
        return oldest

    def form(self, method: str, kwargs: dict) -> tuple[str, dict]:
        """The version and arguments to send ``method`` with;
        ``ConductorTooOld`` when the cap allows no form of it."""
        version = self._needed.get(method, '1.0')
        if version == '1.0':
            return version, kwargs
        cap = self.get()
        if at_most(version, cap):
            return version, kwargs
        older = OLDER_FORMS.get(method)
        if older is None or not at_most(older[0], cap):
            raise exception.ConductorTooOld(method=method, needed=version,
                                            cap=cap)
        older_version, dropped = older
        kwargs = {k: v for k, v in kwargs.items() if k not in dropped}
        if method == 'call_batch':
            kwargs['calls'] = [self._older_call(call, cap)
                               for call in kwargs['calls']]
        return older_version, kwargs

    def _older_call(self, call, cap):
        # A batch carries calls of one short transaction (see
        # cyborg_lite.conductor.batching), each with an older form.
        return dict(call, kwargs=self.form(call['method'],
                                           call['kwargs'])[1])

    def repeat_safe(self, method: str) -> bool:
        """Whether a lost ``method`` may be sent again under the cap."""
        needed = SAFE_REPEAT_FROM.get(method)
        return needed is None or at_most(needed, self.get())
