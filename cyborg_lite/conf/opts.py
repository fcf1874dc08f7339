"""Entry point for oslo-config-generator (``tox -e genconfig``)."""

from cyborg_lite.conf import _MODULES


def list_opts():
    groups = {}
    for module in _MODULES:
        for group, opts in module.list_opts().items():
            groups.setdefault(group, []).extend(opts)
    return sorted(groups.items())
