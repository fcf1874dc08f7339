"""``GET /openapi.yaml``: the OpenAPI description of the compute API.

``openapi.yaml`` in this package describes every route of
``nova_shim.api.app.ROUTES``. What changes with the code is
filled in when it is served, from the tables the handlers use: the
action names a server action body may hold (``server_actions.ACTIONS``) and
the event names and statuses of ``os-server-external-events``.
"""

import functools
import importlib.resources

import webob
import yaml

from nova_shim.api.handlers import external_events
from nova_shim.api.handlers import server_actions
from nova_shim.compute.manager import ComputeManager


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


@functools.cache
def document() -> bytes:
    doc = yaml.safe_load(importlib.resources.files(__package__).joinpath(
        'openapi.yaml').read_text(encoding='utf-8'))
    schemas = doc['components']['schemas']
    schemas['ServerAction']['propertyNames'] = {
        'enum': sorted(server_actions.ACTIONS)}
    schemas['EventName']['enum'] = sorted(external_events.EVENT_NAMES)
    schemas['EventStatus']['enum'] = sorted(external_events.STATUSES)
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False,
                     allow_unicode=True).encode('utf-8')


def show(req: webob.Request, manager: ComputeManager) -> webob.Response:
    return webob.Response(body=document(), content_type='application/yaml',
                          charset='utf-8')
