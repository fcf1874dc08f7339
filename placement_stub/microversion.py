"""Placement microversions: the list, the header parsing, the predicates.

Each feature is gated by a named predicate taking the request's version
(a ``(major, minor)`` tuple), so handlers read as ``if allow_x(version)``.
"""

import microversion_parse

SERVICE_TYPE = 'placement'
HEADER = 'OpenStack-API-Version'
# Where the request's version (a tuple) is kept in the WSGI environment.
ENVIRON_KEY = 'placement.microversion'

# One entry per microversion, with what it introduced.
VERSIONS = [
    '1.0',   # initial: providers, inventories, usages, allocations
    '1.1',   # provider aggregates
    '1.2',   # custom resource classes
    '1.3',   # member_of on GET /resource_providers
    '1.4',   # resources filter on GET /resource_providers
    '1.5',   # DELETE all inventories of a provider
    '1.6',   # traits
    '1.7',   # PUT /resource_classes/{name} creates, idempotent, no body
    '1.8',   # project_id and user_id required on PUT /allocations
    '1.9',   # GET /usages?project_id=
    '1.10',  # GET /allocation_candidates
    '1.11',  # allocations link on providers
    '1.12',  # PUT /allocations and allocation_requests as dicts
    '1.13',  # POST /allocations (many consumers)
    '1.14',  # nested providers: parent/root uuid, in_tree
    '1.15',  # cache-control and last-modified headers
    '1.16',  # limit on allocation candidates
    '1.17',  # required traits on allocation candidates
    '1.18',  # required traits on GET /resource_providers
    '1.19',  # aggregates with provider generation
    '1.20',  # POST /resource_providers returns the provider
    '1.21',  # member_of on allocation candidates
    '1.22',  # forbidden traits (!TRAIT)
    '1.23',  # error codes in error responses
    '1.24',  # repeated member_of
    '1.25',  # granular (suffixed) request groups, group_policy
    '1.26',  # reserved may equal total
    '1.27',  # summaries list every resource class of a provider
    '1.28',  # consumer generations
    '1.29',  # nested providers in allocation candidates
    '1.30',  # POST /reshaper
    '1.31',  # in_tree on allocation candidates
    '1.32',  # forbidden aggregates (member_of=!)
    '1.33',  # arbitrary string suffixes for request groups
    '1.34',  # mappings in allocation requests
    '1.35',  # root_required
    '1.36',  # same_subtree and resourceless request groups
    '1.37',  # re-parenting and un-parenting providers
    '1.38',  # consumer types
    '1.39',  # any-of traits (in:) in required
]

MIN_VERSION = (1, 0)
MAX_VERSION = (1, 39)


class InvalidVersion(ValueError):
    """The header is malformed (400)."""


class UnacceptableVersion(ValueError):
    """The version is outside what we support (406)."""


def version_string(version: tuple) -> str:
    return '%d.%d' % version


def extract_version(headers) -> tuple:
    """The requested version as a tuple; the minimum when absent."""
    raw = microversion_parse.get_version(headers, service_type=SERVICE_TYPE)
    if raw is None:
        return MIN_VERSION
    if raw.strip() == 'latest':
        return MAX_VERSION
    try:
        major, minor = microversion_parse.parse_version_string(raw)
    except (TypeError, ValueError):
        raise InvalidVersion(raw)
    if major != 1 or not MIN_VERSION <= (major, minor) <= MAX_VERSION:
        raise UnacceptableVersion(raw)
    return major, minor


def _at_least(minor):
    return lambda version: version >= (1, minor)


allow_aggregates = _at_least(1)
allow_resource_classes = _at_least(2)
allow_member_of = _at_least(3)
allow_resources_filter = _at_least(4)
allow_delete_all_inventories = _at_least(5)
allow_traits = _at_least(6)
allow_put_resource_class_create = _at_least(7)
require_project_user = _at_least(8)
allow_usages_by_project = _at_least(9)
allow_allocation_candidates = _at_least(10)
allow_allocations_link = _at_least(11)
allow_dict_allocations = _at_least(12)
allow_post_allocations = _at_least(13)
allow_nested = _at_least(14)
allow_cache_headers = _at_least(15)
allow_limit = _at_least(16)
allow_candidate_traits = _at_least(17)
allow_provider_required = _at_least(18)
allow_aggregates_generation = _at_least(19)
allow_create_returns_body = _at_least(20)
allow_candidate_member_of = _at_least(21)
allow_forbidden_traits = _at_least(22)
allow_error_codes = _at_least(23)
allow_multi_member_of = _at_least(24)
allow_granular = _at_least(25)
allow_reserved_equal_total = _at_least(26)
allow_full_summaries = _at_least(27)
allow_consumer_generation = _at_least(28)
allow_nested_candidates = _at_least(29)
allow_reshaper = _at_least(30)
allow_candidate_in_tree = _at_least(31)
allow_forbidden_aggregates = _at_least(32)
allow_string_suffixes = _at_least(33)
allow_mappings = _at_least(34)
allow_root_required = _at_least(35)
allow_same_subtree = _at_least(36)
allow_reparenting = _at_least(37)
allow_consumer_types = _at_least(38)
allow_any_traits = _at_least(39)
