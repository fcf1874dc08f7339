"""Faults at the hypervisor boundary: libvirt refusing to start,
destroy or undefine a domain, with a real ``libvirtError``.

``FaultyConnection(conn)`` wraps the driver's libvirt connection (the
test driver's); its domains are the real ones, whose ``create``,
``destroy`` and ``undefineFlags`` raise while ``fail`` says so.
Install it with ``install``.
"""

import libvirt

OPERATIONS = ('create', 'destroy', 'undefineFlags')


class FaultyConnection:
    def __init__(self, conn):
        self._conn = conn
        self._failing = {}

    def fail(self, operation, reason):
        """Each ``operation`` (of ``OPERATIONS``) raises ``reason``
        until ``heal``."""
        assert operation in OPERATIONS, operation
        self._failing[operation] = reason

    def heal(self):
        self._failing.clear()

    def raise_if_failing(self, operation):
        reason = self._failing.get(operation)
        if reason is not None:
            raise libvirt.libvirtError(reason)

    def defineXML(self, xml):
        return _Domain(self._conn.defineXML(xml), self)

    def lookupByUUIDString(self, uuid):
        return _Domain(self._conn.lookupByUUIDString(uuid), self)

    def __getattr__(self, name):
        return getattr(self._conn, name)


class _Domain:
    def __init__(self, domain, owner):
        self._domain = domain
        self._owner = owner

    def create(self):
        self._owner.raise_if_failing('create')
        return self._domain.create()

    def destroy(self):
        self._owner.raise_if_failing('destroy')
        return self._domain.destroy()

    def undefineFlags(self, flags=0):
        self._owner.raise_if_failing('undefineFlags')
        return self._domain.undefineFlags(flags)

    def __getattr__(self, name):
        return getattr(self._domain, name)


def install(monkeypatch, chain):
    """The chain's driver talks to libvirt through a FaultyConnection
    (for the test); returns it."""
    host = chain.service.deps.driver.host
    faulty = FaultyConnection(host.get_connection())
    monkeypatch.setattr(host, 'get_connection', lambda: faulty)
    return faulty
