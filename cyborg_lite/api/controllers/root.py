"""The root of the API: version discovery and the optional /v2 prefix.

Upstream routes ``/accelerator_requests`` and ``/v2/accelerator_requests``
to the same handler; :meth:`RootController._lookup` does the same.
"""

import pecan

from cyborg_lite.api import views
from cyborg_lite.api.controllers.v2 import accelerator_requests
from cyborg_lite.api.controllers.v2 import device_profiles
from cyborg_lite.api.controllers.v2 import inventory


class V2Controller:
    accelerator_requests = (
        accelerator_requests.AcceleratorRequestsController())
    device_profiles = device_profiles.DeviceProfilesController()
    devices = inventory.DevicesController()
    deployables = inventory.DeployablesController()
    attributes = inventory.AttributesController()

    @pecan.expose(generic=True)
    def index(self):
        # Any method but GET and HEAD.
        pecan.abort(405, headers={'Allow': 'GET, HEAD'})

    @index.when(method='GET', template='json')
    @index.when(method='HEAD', template='json')
    def index_get(self):
        return views.version_document(
            views.base_url(pecan.request, pecan.request.conf),
            with_root=False)


class RootController:
    v2 = V2Controller()

    @pecan.expose(generic=True)
    def index(self):
        # Any method but GET and HEAD.
        pecan.abort(405, headers={'Allow': 'GET, HEAD'})

    @index.when(method='GET', template='json')
    @index.when(method='HEAD', template='json')
    def index_get(self):
        return views.version_document(
            views.base_url(pecan.request, pecan.request.conf))

    @pecan.expose()
    def _lookup(self, collection, *remainder):
        # Pecan does not strip extensions here (guess_content_type_from_ext
        # is off), so route the public ``/.json`` and ``/v2.json`` by hand.
        if collection == '.json' and not remainder:
            return self, ('index',)
        if collection == 'v2.json' and not remainder:
            return self.v2, ('index',)
        if hasattr(V2Controller, collection):
            return self.v2, (collection,) + remainder
        pecan.abort(404)
