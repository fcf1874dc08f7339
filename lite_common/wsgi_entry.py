"""WSGI entry points whose application is built on the server's first
look at it, not on import.

gunicorn, uwsgi and mod_wsgi import a module and read its
``application``; a worker that builds its app then (after the fork)
can refuse to load a configuration that cannot serve
(``lite_common.auth.wsgi_load_error``), while importing the module
does nothing.
"""

from typing import Any, Callable


def built_on_first_look(namespace: dict, build: Callable[[], Any],
                        name: str = 'application') -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for the module whose globals
    are ``namespace``: the first look at ``name`` stores and returns
    ``build()``; any other missing name is an AttributeError."""
    def __getattr__(attr: str) -> Any:
        if attr != name:
            raise AttributeError('module %r has no attribute %r'
                                 % (namespace.get('__name__'), attr))
        value = build()
        namespace[name] = value
        return value
    return __getattr__
