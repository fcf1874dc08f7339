"""Choose a compute node for an instance and claim its resources.

This is the part of Nova's scheduler that accelerators need. Building
the Placement query and reading its answer are pure functions; the
functions that take a keystoneauth1 ``adapter`` talk to Placement:

* ``select_destinations``: ``GET /allocation_candidates`` (1.36)
  with the flavor's resources unsuffixed and one suffixed group per
  device profile group (``resourcesdevice_profile_0=FPGA:1``), then
  ``PUT /allocations/{instance}`` for the first candidate that claims
  (the next one on 409), those of one of the first ``host_subset_size``
  compute nodes offered first, chosen at random as Nova chooses. It
  returns the chosen compute node and the ``mappings``
  (``{"device_profile_0": [rp_uuid]}``) that
  ``create_arqs_and_match_resource_providers`` takes, and, as Nova's
  scheduler does, alternates: one unclaimed candidate on each of up to
  ``max_attempts - 1`` other compute nodes, which a reschedule claims
  with ``claim``. Excluded compute nodes (down, disabled, an evacuated
  instance's own) are never offered.
* ``ensure_compute_node``: the compute node's root provider and its
  VCPU, MEMORY_MB and DISK_GB inventory, as nova-compute reports them.
* ``move_allocations``: hand one consumer's allocations to another in
  one ``POST /allocations``, as Nova's report client does when a cold
  migration or resize starts (the instance's source allocation goes to
  the migration) and when it is reverted (back to the instance);
* ``delete_allocation``.
"""

import dataclasses
import logging
import random
from typing import Any, Iterable

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
import requests

from nova_shim import auth
from nova_shim import exception

LOG = logging.getLogger(__name__)

GROUP = 'placement'
# 1.36: mappings (1.34), root_provider_uuid in summaries (1.29), suffixed
# groups with any string suffix (1.33) and consumer generations (1.28).
CANDIDATES_VERSION = '1.36'
PROVIDER_VERSION = '1.20'  # POST /resource_providers returns the provider
TRAITS_VERSION = '1.6'
DEFAULT_CANDIDATE_LIMIT = 1000
_CLAIM_ATTEMPTS = 3


@dataclasses.dataclass
class RequestGroup:
    """One Placement request group; ``requester_id`` is its suffix."""

    requester_id: str | None = None
    resources: dict[str, int] = dataclasses.field(default_factory=dict)
    required_traits: set[str] = dataclasses.field(default_factory=set)
    forbidden_traits: set[str] = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Candidate:
    """One allocation request from ``GET /allocation_candidates``."""

    allocations: dict[str, dict[str, int]]  # rp uuid -> {rc: amount}
    mappings: dict[str, list[str]]  # requester id -> [rp uuid]
    root_provider_uuid: str


@dataclasses.dataclass
class Selection:
    """The claimed candidate: where the instance goes."""

    compute_node_uuid: str
    compute_node_name: str  # the hypervisor hostname, for ARQ binding
    mappings: dict[str, list[str]]
    allocations: dict[str, dict[str, int]]


def get_placement_adapter(conf: cfg.ConfigOpts) -> ks_adapter.Adapter:
    """An adapter for Placement with the service's own credentials."""
    return auth.load_adapter(conf, GROUP,
                             auth.get_service_auth_plugin(conf, GROUP))


def _resources_param(resources: dict[str, int]) -> str:
    return ','.join('%s:%d' % (rc, amount)
                    for rc, amount in sorted(resources.items()) if amount)


def _traits_param(group: RequestGroup) -> str:
    return ','.join(sorted(group.required_traits) +
                    ['!' + t for t in sorted(group.forbidden_traits)])


def build_candidates_query(vcpus: int, memory_mb: int, disk_gb: int,
                           groups: Iterable[RequestGroup],
                           in_tree: str | None = None,
                           limit: int = DEFAULT_CANDIDATE_LIMIT
                           ) -> list[tuple[str, str]]:
    """Query parameters for ``GET /allocation_candidates``.

    The flavor's resources form the unsuffixed group; each device
    profile group is suffixed by its requester id, and the suffixed
    groups may share providers (``group_policy=none``, Nova's default).
    ``in_tree`` restricts the search to one compute node.
    """
    flavor = {'VCPU': vcpus, 'MEMORY_MB': memory_mb, 'DISK_GB': disk_gb}
    query = [('resources', _resources_param(flavor))]
    suffixed = False
    for group in groups:
        suffix = group.requester_id or ''
        suffixed = suffixed or bool(suffix)
        query.append(('resources' + suffix, _resources_param(group.resources)))
        traits = _traits_param(group)
        if traits:
            query.append(('required' + suffix, traits))
    if suffixed:
        query.append(('group_policy', 'none'))
    if in_tree:
        query.append(('in_tree', in_tree))
    query.append(('limit', str(limit)))
    return query


def parse_candidates(body: dict) -> list[Candidate]:
    """The allocation requests of a 1.36 answer, in Placement's order::

        {"allocation_requests": [{"allocations": {"<rp>": {"resources":
            {"VCPU": 1}}}, "mappings": {"": ["<rp>"],
            "device_profile_0": ["<child rp>"]}}],
         "provider_summaries": {"<rp>": {"root_provider_uuid": "<root>",
            "parent_provider_uuid": null, "resources": {...}, ...}}}
    """
    summaries = body.get('provider_summaries', {})
    candidates = []
    for request in body.get('allocation_requests', []):
        allocations = {rp: alloc['resources']
                       for rp, alloc in request['allocations'].items()}
        first_rp = next(iter(allocations))
        root = summaries.get(first_rp, {}).get('root_provider_uuid', first_rp)
        candidates.append(Candidate(allocations, request.get('mappings', {}),
                                    root))
    return candidates


def build_allocation_body(candidate: Candidate, project_id: str,
                          user_id: str,
                          consumer_generation: int | None = None
                          ) -> dict[str, Any]:
    """The body of ``PUT /allocations/{consumer}`` (1.36): for a new
    consumer, or replacing the allocations of the consumer at
    ``consumer_generation``."""
    allocations = candidate.allocations.items()
    return {'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations},
            'consumer_generation': consumer_generation,
            'project_id': project_id,
            'user_id': user_id}


def _request(adapter: ks_adapter.Adapter, method: str, url: str,
             version: str | None = None, **kwargs: Any) -> requests.Response:
    """One Placement call; the response, or PlacementAPIError."""
    try:
        return adapter.request(url, method, microversion=version, **kwargs)
    except ks_exc.ClientException as exc:
        raise exception.PlacementAPIError(method=method, url=url,
                                          msg=str(exc)) from exc


def _fail(resp: requests.Response, method: str,
          url: str) -> exception.PlacementAPIError:
    return exception.PlacementAPIError(
        method=method, url=url, status_code=resp.status_code,
        msg='Placement returned %d: %s' % (resp.status_code, resp.text[:300]))


def claim_resources(adapter: ks_adapter.Adapter, instance_uuid: str,
                    candidate: Candidate, project_id: str,
                    user_id: str,
                    consumer_generation: int | None = None) -> bool:
    """Claim a candidate for the instance; False if Placement said 409."""
    url = '/allocations/%s' % instance_uuid
    resp = _request(adapter, 'PUT', url, CANDIDATES_VERSION,
                    json=build_allocation_body(candidate, project_id, user_id,
                                               consumer_generation))
    if resp.status_code == 409:
        LOG.info('Claim for instance %s lost a race: %s', instance_uuid,
                 resp.text[:300])
        return False
    if resp.status_code != 204:
        raise _fail(resp, 'PUT', url)
    return True


def subset_first(candidates: list[Candidate],
                 host_subset_size: int) -> list[Candidate]:
    """``candidates`` with those of one compute node first, chosen at
    random among the first ``host_subset_size`` nodes they name (Nova's
    ``[filter_scheduler] host_subset_size``)."""
    roots = list(dict.fromkeys(c.root_provider_uuid for c in candidates))
    chosen = random.choice(roots[:max(1, host_subset_size)])
    return ([c for c in candidates if c.root_provider_uuid == chosen] +
            [c for c in candidates if c.root_provider_uuid != chosen])


def alternates(candidates: list[Candidate], chosen_root: str,
               count: int) -> list[Candidate]:
    """The first candidate of each of up to ``count`` compute nodes other
    than ``chosen_root``, in the order given (Nova's alternate hosts)."""
    found: dict[str, Candidate] = {}
    for candidate in candidates:
        root = candidate.root_provider_uuid
        if root != chosen_root and root not in found:
            found[root] = candidate
    return list(found.values())[:max(0, count)]


def claim(adapter: ks_adapter.Adapter, instance_uuid: str,
          candidate: Candidate, project_id: str, user_id: str,
          consumer_generation: int | None = None) -> Selection | None:
    """Claim ``candidate``; its Selection, or None if it lost a race.

    Nothing is left claimed when this raises: the compute node's name is
    read before the claim, and a claim for an instance that held nothing
    whose answer was an error (Placement may have written it before it
    failed, or the answer was lost) is deleted again.
    """
    root = get_provider(adapter, candidate.root_provider_uuid)
    name = root['name'] if root else candidate.root_provider_uuid
    try:
        claimed = claim_resources(adapter, instance_uuid, candidate,
                                  project_id, user_id, consumer_generation)
    except exception.PlacementAPIError:
        if consumer_generation is None:
            _delete_allocation_if_possible(adapter, instance_uuid)
        raise
    if not claimed:
        return None
    return Selection(candidate.root_provider_uuid, name, candidate.mappings,
                     candidate.allocations)


def select_destinations(adapter: ks_adapter.Adapter, instance_uuid: str,
                        project_id: str, user_id: str, *, vcpus: int,
                        memory_mb: int, disk_gb: int,
                        groups: Iterable[RequestGroup] = (),
                        in_tree: str | None = None,
                        host_subset_size: int = 1, max_attempts: int = 1,
                        exclude_roots: Iterable[str] = (),
                        consumer_generation: int | None = None
                        ) -> tuple[Selection, list[Candidate]]:
    """Find a compute node with room and claim it for the instance.

    Returns the claimed Selection and up to ``max_attempts - 1``
    unclaimed alternates on other compute nodes. ``consumer_generation``
    is that of the allocations the claim replaces (an evacuation); None
    for an instance that holds none. Raises NoValidHost when Placement
    has no candidate outside ``exclude_roots`` or every claim loses a
    race.
    """
    query = build_candidates_query(vcpus, memory_mb, disk_gb, groups, in_tree)
    resp = _request(adapter, 'GET', '/allocation_candidates',
                    CANDIDATES_VERSION, params=query)
    if resp.status_code != 200:
        raise _fail(resp, 'GET', '/allocation_candidates')
    excluded = set(exclude_roots)
    candidates = [c for c in parse_candidates(resp.json())
                  if c.root_provider_uuid not in excluded]
    if not candidates:
        raise exception.NoValidHost(reason='No allocation candidates.')
    candidates = subset_first(candidates, host_subset_size)
    for candidate in candidates[:_CLAIM_ATTEMPTS]:
        selection = claim(adapter, instance_uuid, candidate, project_id,
                          user_id, consumer_generation)
        if selection is not None:
            return selection, alternates(
                candidates, selection.compute_node_uuid, max_attempts - 1)
    raise exception.NoValidHost(reason='Every claim conflicted.')


def consumer_generation(adapter: ks_adapter.Adapter,
                        instance_uuid: str) -> int | None:
    """The generation of the instance's allocations; None if it holds
    none."""
    url = '/allocations/%s' % instance_uuid
    resp = _request(adapter, 'GET', url, CANDIDATES_VERSION)
    if resp.status_code != 200:
        raise _fail(resp, 'GET', url)
    body = resp.json()
    return body.get('consumer_generation') if body.get('allocations') \
        else None


def _get_allocations(adapter: ks_adapter.Adapter, consumer: str) -> dict:
    url = '/allocations/%s' % consumer
    resp = _request(adapter, 'GET', url, CANDIDATES_VERSION)
    if resp.status_code != 200:
        raise _fail(resp, 'GET', url)
    return resp.json()


def move_allocations(adapter: ks_adapter.Adapter, source_consumer: str,
                     target_consumer: str) -> bool:
    """Give ``source_consumer``'s allocations to ``target_consumer`` (whose
    own, if any, they replace) in one call; False when the source holds
    none. A generation conflict (another writer meanwhile) is tried
    again with fresh generations, up to three times."""
    for _attempt in range(_CLAIM_ATTEMPTS):
        source = _get_allocations(adapter, source_consumer)
        if not source.get('allocations'):
            return False
        target = _get_allocations(adapter, target_consumer)
        owner = {'project_id': source['project_id'],
                 'user_id': source['user_id']}
        body = {
            source_consumer: dict(
                owner, allocations={},
                consumer_generation=source['consumer_generation']),
            target_consumer: dict(
                owner, allocations={
                    rp: {'resources': alloc['resources']}
                    for rp, alloc in source['allocations'].items()},
                consumer_generation=(target.get('consumer_generation')
                                     if target.get('allocations') else None)),
        }
        resp = _request(adapter, 'POST', '/allocations', CANDIDATES_VERSION,
                        json=body)
        if resp.status_code == 204:
            return True
        if resp.status_code != 409:
            raise _fail(resp, 'POST', '/allocations')
        LOG.info('Moving allocations of %s to %s conflicted; trying again',
                 source_consumer, target_consumer)
    raise exception.PlacementAPIError(
        method='POST', url='/allocations',
        msg='the allocations of %s kept changing' % source_consumer)


def delete_allocation(adapter: ks_adapter.Adapter, instance_uuid: str) -> None:
    """Remove the instance's allocations; none is not an error."""
    url = '/allocations/%s' % instance_uuid
    resp = _request(adapter, 'DELETE', url)
    if resp.status_code == 404:
        LOG.debug('Instance %s had no allocations', instance_uuid)
    elif resp.status_code != 204:
        raise _fail(resp, 'DELETE', url)


def _delete_allocation_if_possible(adapter: ks_adapter.Adapter,
                                   instance_uuid: str) -> None:
    try:
        delete_allocation(adapter, instance_uuid)
    except exception.PlacementAPIError as exc:
        LOG.warning('Instance %s may keep an allocation that a failed '
                    'claim made: %s', instance_uuid, exc)


def get_provider(adapter: ks_adapter.Adapter, rp_uuid: str) -> dict | None:
    """A resource provider (``{"uuid", "name", "generation", ...}``)."""
    url = '/resource_providers/%s' % rp_uuid
    resp = _request(adapter, 'GET', url, PROVIDER_VERSION)
    if resp.status_code == 404:
        return None
    if resp.status_code != 200:
        raise _fail(resp, 'GET', url)
    return resp.json()


def _put_checked(adapter: ks_adapter.Adapter, url: str, body: dict | None,
                 version: str | None, ok: tuple[int, ...] = (200,)) -> dict:
    resp = _request(adapter, 'PUT', url, version, json=body)
    if resp.status_code not in ok:
        raise _fail(resp, 'PUT', url)
    return resp.json() if resp.content else {}


def compute_inventory(vcpus: int, memory_mb: int,
                      disk_gb: int) -> dict[str, dict[str, int]]:
    """A compute node's inventory as nova-compute reports it."""
    totals = {'VCPU': vcpus, 'MEMORY_MB': memory_mb, 'DISK_GB': disk_gb}
    return {rc: {'total': total, 'reserved': 0, 'min_unit': 1,
                 'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
            for rc, total in totals.items() if total > 0}


def ensure_compute_node(adapter: ks_adapter.Adapter, *, name: str, uuid: str,
                        vcpus: int, memory_mb: int, disk_gb: int,
                        traits: Iterable[str] = ()) -> dict:
    """Create or update a compute node's root provider; return it.

    ``name`` is the hypervisor hostname, by which Cyborg's agent finds
    the provider to put its deployables under.
    """
    provider = get_provider(adapter, uuid)
    if provider is None:
        url = '/resource_providers'
        resp = _request(adapter, 'POST', url, PROVIDER_VERSION,
                        json={'uuid': uuid, 'name': name})
        if resp.status_code != 200:
            raise _fail(resp, 'POST', url)
        provider = resp.json()
    inventories = _put_checked(
        adapter, '/resource_providers/%s/inventories' % uuid,
        {'resource_provider_generation': provider['generation'],
         'inventories': compute_inventory(vcpus, memory_mb, disk_gb)}, None)
    provider['generation'] = inventories['resource_provider_generation']
    traits = sorted(set(traits))
    for trait in traits:
        if trait.startswith('CUSTOM_'):
            _put_checked(adapter, '/traits/%s' % trait, None, TRAITS_VERSION,
                         ok=(201, 204))
    if traits:
        result = _put_checked(
            adapter, '/resource_providers/%s/traits' % uuid,
            {'resource_provider_generation': provider['generation'],
             'traits': traits}, TRAITS_VERSION)
        provider['generation'] = result['resource_provider_generation']
    LOG.info('Compute node %s (%s) registered in Placement', name, uuid)
    return provider
