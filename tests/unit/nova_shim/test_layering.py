"""nova_shim's layers point one way, and no module imports itself back.

* ``nova_shim.api`` (routes, authentication, handlers) calls the
  operations through the manager and never touches the database;
* ``nova_shim.compute`` (the manager and the operations) never imports
  the API;
* no import circle anywhere in the package, counting the imports made
  only for type annotations (they tie modules together all the same).
"""

import ast
import pathlib

import nova_shim

PACKAGE_DIR = pathlib.Path(nova_shim.__file__).parent
DATABASE = ('nova_shim.compute.db', 'nova_shim.db', 'sqlalchemy', 'alembic')


def _module_name(path):
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


MODULES = {_module_name(path): path for path in PACKAGE_DIR.rglob('*.py')
           if '__pycache__' not in path.parts}


def _imports(path):
    """The modules of this package and libraries that ``path`` imports;
    ``from a import b`` is ``a.b`` where that is a module, else ``a``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                name = node.module + '.' + alias.name
                found.add(name if name in MODULES else node.module)
    return found


GRAPH = {name: {imp for imp in _imports(path) if imp in MODULES}
         for name, path in MODULES.items()}


def _under(name, *prefixes):
    return any(name == p or name.startswith(p + '.') for p in prefixes)


def test_the_api_never_touches_the_database():
    offenders = sorted((name, imp) for name, path in MODULES.items()
                       if _under(name, 'nova_shim.api')
                       for imp in _imports(path) if _under(imp, *DATABASE))
    assert offenders == []


def test_the_operations_never_import_the_api():
    offenders = sorted((name, imp) for name, imports in GRAPH.items()
                       if _under(name, 'nova_shim.compute')
                       for imp in imports if _under(imp, 'nova_shim.api'))
    assert offenders == []


def _cycles():
    """The strongly connected components of more than one module
    (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(GRAPH[node]):
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

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert _cycles() == []


def test_the_circle_check_sees_a_circle():
    # A positive control: the check finds a circle made on purpose.
    GRAPH['nova_shim.compute.states'].add('nova_shim.compute.manager')
    try:
        assert _cycles()
    finally:
        GRAPH['nova_shim.compute.states'].discard('nova_shim.compute.manager')
