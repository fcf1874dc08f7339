"""The three services are peers, and share only ``lite_common``.

* ``lite_common`` imports none of ``cyborg_lite``, ``placement_stub``
  and ``nova_shim``;
* ``placement_stub`` and ``nova_shim`` import neither ``cyborg_lite``
  nor each other;
* inside ``cyborg_lite``, only the all-in-one's composition root imports
  the peers (``tests/unit/cyborg_lite/test_layering.py``);
* no import circle anywhere in the four packages, counting the imports
  made inside functions and only for type annotations (they tie modules
  together all the same).
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


def _module_name(path):
    parts = list(path.relative_to(REPO).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


MODULES = {_module_name(path): path
           for package in SERVICES + ('lite_common',)
           for path in (REPO / package).rglob('*.py')}


def _imported_modules(path):
    """The modules of the house that ``path`` imports; ``from a import
    b`` is ``a.b`` where that is a module, else ``a``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and \
                not node.level:
            for alias in node.names:
                name = node.module + '.' + alias.name
                found.add(name if name in MODULES else node.module)
    return found & set(MODULES)


GRAPH = {name: _imported_modules(path) for name, path in MODULES.items()}


def _cycles(graph):
    """The strongly connected components of more than one module
    (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert _cycles(GRAPH) == []


def test_the_circle_check_sees_a_circle():
    # A positive control: the check finds a circle made on purpose.
    graph = {name: set(imports) for name, imports in GRAPH.items()}
    graph['nova_shim.compute.states'].add('nova_shim.compute.manager')
    graph['cyborg_lite.agent.names'].add('cyborg_lite.agent.sysfs')
    assert len(_cycles(graph)) == 2
