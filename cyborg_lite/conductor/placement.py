"""The Placement client used by cyborg-lite's conductor and agent.

One class over a keystoneauth1 Adapter (service type ``placement``),
written against the Placement API itself, so it works with real Placement
as well as with ``placement_stub``. Writes are skipped when Placement
already holds the wanted state, and the client counts its calls
(``calls_read``, ``calls_write``) so that tests can assert that an
unchanged report costs no writes. Generation conflicts (409
``placement.concurrent_update``) are retried with fresh data.
"""

import logging
from typing import Iterable, Optional
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
import os_resource_classes

LOG = logging.getLogger(__name__)

# 1.14 nested providers, 1.20 POST returns the provider, 1.26 reserved
# may equal total.
API_VERSION = '1.26'
CONCURRENT_UPDATE = 'placement.concurrent_update'
# Placement knows every class of os-resource-classes.
STANDARD_RESOURCE_CLASSES = frozenset(os_resource_classes.STANDARDS)


class PlacementError(Exception):
    """A Placement call failed: ``status`` (None: no answer), ``code``."""

    def __init__(self, status: Optional[int], message: str,
                 code: Optional[str] = None):
        super().__init__('Placement error %s: %s' % (status, message))
        self.status = status
        self.message = message
        self.code = code


def get_adapter(conf, group: str = 'placement'):
    """A keystoneauth1 Adapter from the ``[placement]`` options of conf."""
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth)


def get_client(conf, group: str = 'placement') -> 'PlacementClient':
    return PlacementClient(get_adapter(conf, group))


def _error_of(resp) -> tuple:
    try:
        error = resp.json()['errors'][0]
        return error.get('detail', resp.text), error.get('code')
    except (ValueError, KeyError, IndexError, TypeError):
        return resp.text, None


class PlacementClient:
    """Placement calls the conductor and agent need."""

    def __init__(self, adapter, retries: int = 3):
        self._adapter = adapter
        self.retries = retries
        self.calls_read = 0
        self.calls_write = 0
        self._known_classes = set(STANDARD_RESOURCE_CLASSES)
        self._known_traits = set()

    # -- transport -----------------------------------------------------

    def _call(self, method: str, url: str, body=None, ok=(200,)):
        """One request; returns the response, raises PlacementError."""
        if method == 'GET':
            self.calls_read += 1
        else:
            self.calls_write += 1
        kwargs = {'microversion': API_VERSION, 'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        try:
            resp = self._adapter.request(url, method, **kwargs)
        except ks_exc.ClientException as exc:
            raise PlacementError(None, str(exc))
        if resp.status_code not in ok:
            message, code = _error_of(resp)
            raise PlacementError(resp.status_code, message, code)
        return resp

    def _retrying(self, attempt):
        """Run ``attempt()`` again on generation conflicts."""
        for tries_left in range(self.retries, -1, -1):
            try:
                return attempt()
            except PlacementError as exc:
                if exc.code != CONCURRENT_UPDATE or not tries_left:
                    raise
                LOG.debug('placement generation conflict, retrying')

    # -- providers -----------------------------------------------------

    def get_provider(self, uuid: str) -> Optional[dict]:
        """``GET /resource_providers/{uuid}``; None when absent.

        Returns ``{"uuid", "name", "generation", "parent_provider_uuid",
        "root_provider_uuid", "links": [...]}``.
        """
        resp = self._call('GET', '/resource_providers/%s' % uuid,
                          ok=(200, 404))
        return resp.json() if resp.status_code == 200 else None

    def get_provider_by_name(self, name: str) -> Optional[dict]:
        """``GET /resource_providers?name=``; the provider or None.

        Placement answers ``{"resource_providers": [{"uuid", "name",
        "generation", ...}]}`` with zero or one entry.
        """
        resp = self._call('GET', '/resource_providers?' + parse.urlencode(
            {'name': name}))
        providers = resp.json()['resource_providers']
        return providers[0] if providers else None

    def ensure_child_provider(self, uuid: str, name: str,
                              parent_uuid: str) -> dict:
        """Create (or rename) provider ``uuid`` under ``parent_uuid``.

        ``POST /resource_providers`` with ``{"uuid", "name",
        "parent_provider_uuid"}``; no write when it already matches.
        """
        rp = self.get_provider(uuid)
        if rp is None:
            return self._call('POST', '/resource_providers', {
                'uuid': uuid, 'name': name,
                'parent_provider_uuid': parent_uuid}).json()
        if rp['name'] == name and rp['parent_provider_uuid'] == parent_uuid:
            return rp
        return self._call('PUT', '/resource_providers/%s' % uuid, {
            'name': name, 'parent_provider_uuid': parent_uuid}).json()

    def create_child_provider(self, uuid: str, name: str,
                              parent_uuid: str) -> Optional[dict]:
        """``POST /resource_providers`` without reading first: the new
        provider (its ``generation`` included), or None when Placement
        has one of that uuid or name already (409)."""
        resp = self._call('POST', '/resource_providers', {
            'uuid': uuid, 'name': name,
            'parent_provider_uuid': parent_uuid}, ok=(200, 409))
        return resp.json() if resp.status_code == 200 else None

    def fill_new_provider(self, rp: dict, inventories: dict,
                          traits: Iterable[str]) -> None:
        """Give a provider that ``create_child_provider`` just made (no
        inventory, no trait, its generation known) its inventories
        (``{rc: record}``) and traits: one write each, no read. The
        classes and traits must exist."""
        generation = rp['generation']
        url = '/resource_providers/%s' % rp['uuid']
        if inventories:
            generation = self._call('PUT', url + '/inventories', {
                'resource_provider_generation': generation,
                'inventories': inventories}).json()[
                    'resource_provider_generation']
        wanted = sorted(set(traits))
        if wanted:
            self._call('PUT', url + '/traits', {
                'traits': wanted,
                'resource_provider_generation': generation})

    def delete_provider(self, uuid: str) -> bool:
        """``DELETE /resource_providers/{uuid}``; False when absent."""
        resp = self._call('DELETE', '/resource_providers/%s' % uuid,
                          ok=(204, 404))
        return resp.status_code == 204

    # -- resource classes and traits ------------------------------------

    def ensure_resource_class(self, name: str) -> None:
        """Make sure custom class ``name`` exists (standard ones skipped).

        ``GET /resource_classes/{name}``, then ``PUT`` (1.7+) if missing.
        """
        if name in self._known_classes:
            return
        resp = self._call('GET', '/resource_classes/%s' % name,
                          ok=(200, 404))
        if resp.status_code == 404:
            self._call('PUT', '/resource_classes/%s' % name, ok=(201, 204))
        self._known_classes.add(name)

    def ensure_traits(self, names: Iterable[str]) -> None:
        """Create the missing custom traits among ``names``.

        ``GET /traits?name=in:A,B`` answers ``{"traits": [...]}``; each
        missing one gets ``PUT /traits/{name}``.
        """
        wanted = set(names) - self._known_traits
        if not wanted:
            return
        resp = self._call('GET', '/traits?' + parse.urlencode(
            {'name': 'in:' + ','.join(sorted(wanted))}))
        for name in sorted(wanted - set(resp.json()['traits'])):
            self._call('PUT', '/traits/%s' % name, ok=(201, 204))
        self._known_traits |= wanted

    def set_traits(self, rp_uuid: str, traits: Iterable[str]) -> None:
        """Make the provider's traits exactly ``traits``.

        ``GET /resource_providers/{uuid}/traits`` answers ``{"traits":
        [...], "resource_provider_generation": g}``; ``PUT`` the same
        shape only when the set differs.
        """
        wanted = sorted(set(traits))
        self.ensure_traits(wanted)
        url = '/resource_providers/%s/traits' % rp_uuid

        def attempt():
            current = self._call('GET', url).json()
            if sorted(current['traits']) == wanted:
                return
            self._call('PUT', url, {
                'traits': wanted, 'resource_provider_generation':
                    current['resource_provider_generation']})
        self._retrying(attempt)

    # -- inventories ---------------------------------------------------

    def _update_inventory(self, rp_uuid, rc, change) -> None:
        """Apply ``change(inventory or None) -> fields or None``.

        ``GET /resource_providers/{uuid}/inventories`` answers
        ``{"resource_provider_generation": g, "inventories": {rc:
        {"total", "reserved", "min_unit", "max_unit", "step_size",
        "allocation_ratio"}}}``. A record the provider has is replaced by
        ``PUT .../inventories/{rc}`` (one record plus
        ``resource_provider_generation``); a new one is created by ``POST
        .../inventories`` (the same plus ``resource_class``; 201):
        Placement's PUT of one record only replaces an existing one.
        """
        url = '/resource_providers/%s/inventories' % rp_uuid

        def attempt():
            current = self._call('GET', url).json()
            existing = current['inventories'].get(rc)
            fields = change(existing)
            if fields is None:
                return
            fields['resource_provider_generation'] = current[
                'resource_provider_generation']
            if existing is None:
                self._call('POST', url, dict(fields, resource_class=rc),
                           ok=(201,))
            else:
                self._call('PUT', '%s/%s' % (url, rc), fields)
        self._retrying(attempt)

    def set_inventory(self, rp_uuid: str, rc: str, total: int,
                      reserved: int = 0) -> None:
        """Set ``total`` and ``reserved`` of class ``rc``; no-op if equal."""
        self.ensure_resource_class(rc)

        def change(inv):
            if inv and inv['total'] == total and inv['reserved'] == reserved:
                return None
            fields = dict(inv or {}, total=total, reserved=reserved)
            if inv is None:
                fields['max_unit'] = total
            return fields
        self._update_inventory(rp_uuid, rc, change)

    def set_reserved(self, rp_uuid: str, rc: str, reserved: int) -> None:
        """Set ``reserved`` (may equal total, 1.26); PlacementError 404 if
        the provider has no inventory of ``rc``."""
        def change(inv):
            if inv is None:
                raise PlacementError(404, 'No inventory of %s on %s'
                                     % (rc, rp_uuid))
            if inv['reserved'] == reserved:
                return None
            return dict(inv, reserved=reserved)
        self._update_inventory(rp_uuid, rc, change)
