"""One owner per fact: the API never touches the database."""

import ast
import pathlib

import cyborg_lite

API_DIR = pathlib.Path(cyborg_lite.__file__).parent / 'api'


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_api_never_imports_the_db():
    offenders = [(str(path), name) for path in API_DIR.rglob('*.py')
                 for name in _imports(path)
                 if name.startswith('cyborg_lite.db')
                 or name.startswith('sqlalchemy')]
    assert offenders == []
