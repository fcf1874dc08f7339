"""The three services are peers, and share only ``lite_common``.

* ``lite_common`` imports none of ``cyborg_lite``, ``placement_stub``
  and ``nova_shim``;
* ``placement_stub`` and ``nova_shim`` import neither ``cyborg_lite``
  nor each other;
* inside ``cyborg_lite``, only the all-in-one's composition root imports
  the peers (``tests/unit/cyborg_lite/test_layering.py``).
"""

import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SERVICES = ('cyborg_lite', 'placement_stub', 'nova_shim')
# package -> the packages of this tree it may import besides its own
ALLOWED = {
    'lite_common': set(),
    'placement_stub': {'lite_common'},
    'nova_shim': {'lite_common'},
}


def _imported_packages(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split('.')[0] for alias in node.names)
        elif (isinstance(node, ast.ImportFrom) and node.module
              and not node.level):
            yield node.module.split('.')[0]


@pytest.mark.parametrize('package', sorted(ALLOWED))
def test_a_package_imports_only_what_it_may(package):
    ours = set(SERVICES) | {'lite_common'}
    offenders = sorted(
        (str(path.relative_to(REPO)), name)
        for path in (REPO / package).rglob('*.py')
        for name in _imported_packages(path)
        if name in ours and name != package
        and name not in ALLOWED[package])
    assert offenders == []


def test_the_peers_use_the_shared_package():
    # The rule means something only while the peers do share it.
    for package in ('placement_stub', 'nova_shim', 'cyborg_lite'):
        names = {name for path in (REPO / package).rglob('*.py')
                 for name in _imported_packages(path)}
        assert 'lite_common' in names, package
