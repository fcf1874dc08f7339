"""Layers point down.

* One owner per fact: the API never touches the database.
* One composition root: only ``cyborg_lite.allinone`` imports the peer
  packages ``nova_shim`` and ``placement_stub``; the console scripts
  (``cyborg_lite.cmd``) reach them only through it, and the rest of
  ``cyborg_lite`` not at all.
* The console-script layer is the top: no module outside
  ``cyborg_lite.cmd`` imports it.
"""

import ast
import pathlib

import cyborg_lite

PACKAGE_DIR = pathlib.Path(cyborg_lite.__file__).parent
API_DIR = PACKAGE_DIR / 'api'
CMD_DIR = PACKAGE_DIR / 'cmd'
COMPOSITION_ROOT = PACKAGE_DIR / 'allinone'
PEERS = ('nova_shim', 'placement_stub')


def _imports(path):
    """The modules ``path`` imports; ``from a import b`` gives ``a`` and
    ``a.b``, since ``b`` may be a module (``from cyborg_lite import cmd``)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (node.module + '.' + alias.name
                        for alias in node.names)


def _names(name, packages):
    return any(name == p or name.startswith(p + '.') for p in packages)


def _modules(directory):
    return [path for path in directory.rglob('*.py')
            if '__pycache__' not in path.parts]


def test_api_never_imports_the_db():
    offenders = [(str(path), name) for path in API_DIR.rglob('*.py')
                 for name in _imports(path)
                 if name.startswith('cyborg_lite.db')
                 or name.startswith('sqlalchemy')]
    assert offenders == []


def test_only_the_composition_root_imports_the_peers():
    # cmd/ included: cyborg-lite-allinone goes through cyborg_lite.allinone.
    outside = [path for path in _modules(PACKAGE_DIR)
               if COMPOSITION_ROOT not in path.parents]
    assert CMD_DIR / 'allinone.py' in outside
    offenders = [(str(path.relative_to(PACKAGE_DIR)), name)
                 for path in outside for name in _imports(path)
                 if _names(name, PEERS)]
    assert offenders == []


def test_the_composition_root_imports_the_peers():
    # The rule above means something only while the root is where the
    # peers are imported (it would hold trivially if they moved away).
    names = {name for path in _modules(COMPOSITION_ROOT)
             for name in _imports(path)}
    for peer in PEERS:
        assert any(_names(name, [peer]) for name in names), peer


def test_nothing_below_cmd_imports_cmd():
    offenders = [(str(path.relative_to(PACKAGE_DIR)), name)
                 for path in _modules(PACKAGE_DIR)
                 if CMD_DIR not in path.parents
                 for name in _imports(path)
                 if _names(name, ['cyborg_lite.cmd'])]
    assert offenders == []
