"""The root of the API: version discovery, and the table that routes
every other request to its handler.

Upstream routes ``/accelerator_requests`` and ``/v2/accelerator_requests``
to the same handler, and so does ``RootController._lookup``.

Pecan's object dispatch, and its REST controllers, inspect the signature
of every controller and handler on the way, on every request (each
inspection defines a namedtuple class: a third of the API's own CPU).
``_lookup`` is Pecan's public hook for the paths an application routes
itself: it names the handler method from the path and the HTTP method at
once, so Pecan inspects only that method.
``RequestGuard`` has already refused the
paths and methods that ``cyborg_lite.api.guard.ROUTES`` does not
list, so every request that reaches ``_lookup`` has a handler.
"""

import pecan

from cyborg_lite.api import views
from cyborg_lite.api.controllers.v2 import accelerator_requests
from cyborg_lite.api.controllers.v2 import device_profiles
from cyborg_lite.api.controllers.v2 import inventory

COLLECTIONS = {
    'accelerator_requests': (
        accelerator_requests.AcceleratorRequestsController()),
    'device_profiles': device_profiles.DeviceProfilesController(),
    'devices': inventory.DevicesController(),
    'deployables': inventory.DeployablesController(),
    'attributes': inventory.AttributesController(),
}

# (HTTP method, whether the path names an object) -> handler name.
HANDLERS = {
    ('GET', False): 'get_all', ('POST', False): 'post',
    ('PATCH', False): 'patch', ('DELETE', False): 'delete',
    ('GET', True): 'get_one', ('PATCH', True): 'patch',
    ('DELETE', True): 'delete',
}
# (collection, HTTP method, action) -> handler name, for the paths
# /{collection}/{id}/{action}; the handler gets the id, and the action
# unless the handler is named after it.
ACTIONS = {
    ('devices', 'POST', 'enable'): 'enable',
    ('devices', 'POST', 'disable'): 'disable',
    ('deployables', 'PATCH', 'program'): 'patch',
}


def _version_document(with_root):
    return views.version_document(
        views.base_url(pecan.request, pecan.request.conf),
        with_root=with_root)


class V2Controller:

    @pecan.expose(generic=True)
    def index(self):
        # Any method but GET and HEAD.
        pecan.abort(405, headers={'Allow': 'GET, HEAD'})

    @index.when(method='GET', template='json')
    @index.when(method='HEAD', template='json')
    def index_get(self):
        return _version_document(with_root=False)


V2 = V2Controller()


class RootController:

    @pecan.expose(generic=True)
    def index(self):
        # Any method but GET and HEAD.
        pecan.abort(405, headers={'Allow': 'GET, HEAD'})

    @index.when(method='GET', template='json')
    @index.when(method='HEAD', template='json')
    def index_get(self):
        return _version_document(with_root=True)

    @pecan.expose()
    def _lookup(self, *segments):
        """(handler, its positional arguments) for the path segments
        (``/v2/x`` is ``('v2', 'x')``) and the request's method.

        Pecan calls it for every path but ``/``: the root controller has
        no other attribute to traverse.
        """
        segments = list(segments)
        if segments and not segments[-1]:
            segments.pop()  # a trailing slash
        if segments == ['.json']:
            return self.index, []
        if segments in (['v2'], ['v2.json']):
            return V2.index, []
        if segments[0] == 'v2':
            segments = segments[1:]
        controller = COLLECTIONS.get(segments[0])
        method = pecan.request.method
        method = 'GET' if method == 'HEAD' else method
        if controller is not None and len(segments) <= 2:
            name = HANDLERS.get((method, len(segments) == 2))
            if name is not None:
                return getattr(controller, name), segments[1:]
        elif controller is not None and len(segments) == 3:
            name = ACTIONS.get((segments[0], method, segments[2]))
            if name == segments[2]:
                return getattr(controller, name), segments[1:2]
            if name is not None:
                return getattr(controller, name), segments[1:]
        pecan.abort(404)
