"""Every use of another distribution's private names is listed, with
its reason, in ``tests/private_names.yaml``.

A private name is one that starts with ``_`` (dunders aside): a module
(``import oslo_messaging._drivers``), a name imported from another
package (``from x import _y``), or an attribute this tree reads but
never defines itself (``controller._pecan``: no code here assigns,
defines or passes a ``_pecan``, so it belongs to a library). An
attribute that this tree defines anywhere counts as its own, which
keeps the check simple at the price of missing a library attribute that
shares a name with one of ours.
"""

import ast
import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
OURS = frozenset({'cyborg_lite', 'placement_stub', 'nova_shim',
                  'lite_common', 'tests', 'benchmarks'})
SCANNED = ('cyborg_lite', 'placement_stub', 'nova_shim', 'lite_common',
           'benchmarks', 'tests', 'doc/source')
ALLOW_LIST = REPO / 'tests' / 'private_names.yaml'


def _private(name):
    return name.startswith('_') and not (name.startswith('__') and
                                         name.endswith('__'))


def _defined_names(tree):
    """Every name this module defines, binds, passes or spells."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.Name) and not isinstance(node.ctx,
                                                           ast.Load):
            yield node.id
        elif isinstance(node, ast.Attribute) and not isinstance(
                node.ctx, ast.Load):
            yield node.attr
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, ast.alias) and node.asname:
            yield node.asname
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg
        elif isinstance(node, ast.Constant) and isinstance(
                node.value, str) and node.value.isidentifier():
            # setattr(obj, '_name', ...), __slots__.
            yield node.value


def _uses(tree, ours):
    """The expressions of ``tree`` that use a private name of another
    distribution."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split('.')
                if parts[0] not in OURS and any(map(_private, parts)):
                    yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and \
                not node.level:
            parts = node.module.split('.')
            if parts[0] in OURS:
                continue
            if any(map(_private, parts)):
                yield node.module
            for alias in node.names:
                if _private(alias.name):
                    yield '%s.%s' % (node.module, alias.name)
        elif isinstance(node, ast.Attribute) and _private(node.attr) and \
                node.attr not in ours:
            yield ast.unparse(node)


def _scan():
    trees = {path: ast.parse(path.read_text())
             for base in SCANNED for path in (REPO / base).rglob('*.py')}
    ours = {name for tree in trees.values() for name in _defined_names(tree)}
    return {(str(path.relative_to(REPO)), use)
            for path, tree in trees.items() for use in _uses(tree, ours)}


def _listed():
    entries = yaml.safe_load(ALLOW_LIST.read_text())
    listed = set()
    for entry in entries:
        for key in ('file', 'library', 'uses', 'reason', 'measurement'):
            assert entry.get(key), (key, entry)
        listed |= {(entry['file'], use) for use in entry['uses']}
    return listed


def _matches(found, listed):
    path, use = found
    return (path, use) in listed or ('*', use) in listed


def test_every_use_of_a_private_name_is_listed_with_its_reason():
    listed = _listed()
    unlisted = sorted(f for f in _scan() if not _matches(f, listed))
    assert unlisted == [], (
        'These use another library\'s private names; use a public one, '
        'or list them with the reason and the measurement in %s'
        % ALLOW_LIST.relative_to(REPO))


def test_no_entry_outlives_its_use():
    found = _scan()
    used = {f for f in found} | {('*', use) for _path, use in found}
    stale = sorted(entry for entry in _listed() if entry not in used)
    assert stale == []


def test_the_scan_sees_each_kind_of_use():
    # Positive controls: a private module, a private imported name and a
    # library's private attribute, beside names of this tree's own.
    tree = ast.parse(
        'import oslo_messaging._drivers.base\n'
        'from oslo_messaging import _utils\n'
        'from cyborg_lite import _mine\n'
        'def f(controller):\n'
        '    return controller._pecan, controller._own\n')
    assert set(_uses(tree, {'_own'})) == {
        'oslo_messaging._drivers.base', 'oslo_messaging._utils',
        'controller._pecan'}
