"""The root controller routes every path and method that the request
guard lets through (``cyborg_lite.api.guard.ROUTES``) to an exposed
handler of the right collection."""

import types

import pecan
import pytest

from cyborg_lite.api import guard
from cyborg_lite.api.controllers import root

CASES = [(path, method) for path, methods in guard.ROUTES.items()
         for method in methods + (('HEAD',) if 'GET' in methods else ())]


@pytest.mark.parametrize('prefix', [(), ('v2',)])
@pytest.mark.parametrize('path, method', CASES)
def test_every_guarded_route_has_a_handler(monkeypatch, prefix, path,
                                           method):
    monkeypatch.setattr(pecan, 'request', types.SimpleNamespace(
        method=method))
    segments = prefix + tuple('some-id' if s == guard.ID else s
                              for s in path)
    if not segments:
        return  # "/": Pecan serves the root's index itself
    for trailing in ((), ('',)):
        handler, args = root.RootController()._lookup(*segments + trailing)
        assert handler.exposed
        if path:
            owner = handler.__self__
            assert owner is root.COLLECTIONS[path[0]]
            assert args[:1] == (['some-id'] if len(path) > 1 else [])
        else:
            assert handler.__self__ is root.V2
