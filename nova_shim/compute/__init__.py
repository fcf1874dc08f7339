"""nova_shim's compute service: instances with accelerators.

``states`` (Nova's vm, task and power states), ``db`` (the instance
database), ``flavors``, ``events`` (waiting for external events),
``accelerators`` (ARQs: create, bind, wait, delete), ``build``,
``lifecycle`` and ``shelve`` (the operations), ``manager`` (the thin
entry point over them), and the HTTP API in the shape of Nova's:
``api`` (routing and errors), ``servers``, ``external_events``,
``views`` and ``wsgi``.
"""
