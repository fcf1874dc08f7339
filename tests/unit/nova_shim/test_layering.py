"""nova_shim's layers point one way, and no module imports itself back.

* ``nova_shim.api`` (routes, authentication, handlers) calls the
  operations through the manager and never touches the database;
* ``nova_shim.compute`` (the manager and the operations) never imports
  the API;

(No import circle anywhere: ``tests/unit/test_package_layering.py``.)
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
