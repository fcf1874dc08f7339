"""Handler for GET /allocation_candidates.

SQL finds, per request group and resource class, the providers with
capacity; candidates.combine() walks only the trees present in every
result; summaries are loaded for the trees that made the cut.
"""

from placement_stub import candidates
from placement_stub.db import candidates as candidates_db
from placement_stub.db import inventories
from placement_stub.db import providers
from placement_stub.db import traits
from placement_stub import errors
from placement_stub.handlers import common
from placement_stub import microversion as mv
from placement_stub import request_groups


def _allowed_globals(version):
    allowed = set()
    for predicate, name in ((mv.allow_limit, 'limit'),
                            (mv.allow_granular, 'group_policy'),
                            (mv.allow_root_required, 'root_required'),
                            (mv.allow_same_subtree, 'same_subtree')):
        if predicate(version):
            allowed.add(name)
    return allowed


def _check_group_params(groups, version):
    for group in groups.values():
        if not group.resources:
            raise errors.bad_request(
                'All request groups must specify resources; resourceless '
                'group %r is not supported.' % group.suffix)
        for predicate, present, name in (
                (mv.allow_candidate_traits, group.required or group.forbidden,
                 'required'),
                (mv.allow_candidate_member_of,
                 group.member_of or group.forbidden_aggs, 'member_of'),
                (mv.allow_candidate_in_tree, group.in_tree, 'in_tree')):
            if present and not predicate(version):
                raise errors.bad_request(
                    'Invalid query string parameters: %s is not allowed '
                    'at this microversion.' % name)


def _options(groups, others):
    policy = others.get('group_policy', [None])[-1]
    if policy is None and len([s for s in groups if s]) > 1:
        raise errors.bad_request(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')
    if policy not in (None, 'none', 'isolate'):
        raise errors.bad_request('Invalid query string parameters: '
                                 "'%s' is not one of ['none', 'isolate']"
                                 % policy)
    limit = others.get('limit', [None])[-1]
    if limit is not None:
        if not limit.isdigit() or int(limit) < 1:
            raise errors.bad_request('Invalid query string parameters: '
                                     'limit must be a positive integer.')
        limit = int(limit)
    same_subtree = [value.split(',') for value in
                    others.get('same_subtree', [])]
    for suffixes in same_subtree:
        if any(s not in groups for s in suffixes):
            raise errors.bad_request(
                'Real suffixes should be specified in same_subtree: %s'
                % ','.join(suffixes))
    return candidates.Options(policy or 'none', limit, same_subtree)


def _parse(req, version):
    try:
        groups, others = request_groups.parse_groups(
            req.GET, version, _allowed_globals(version))
    except request_groups.QueryError as exc:
        raise errors.bad_request(str(exc), exc.code)
    if '' not in groups and not groups:
        raise errors.bad_request(
            "Invalid query string parameters: 'resources' is a required "
            "property")
    _check_group_params(groups, version)
    return groups, others


def _root_filter(ctx, others, version, rows_by_group):
    """Roots allowed by ``root_required`` (None: no such filter)."""
    values = others.get('root_required')
    if not values:
        return None
    try:
        required, forbidden = request_groups.parse_traits(values, version)
    except request_groups.QueryError as exc:
        raise errors.bad_request(str(exc), exc.code)
    roots = {row[1] for per_rc in rows_by_group.values()
             for rows in per_rc.values() for row in rows}
    return candidates_db.roots_with_traits(ctx, roots, required, forbidden)


def _unsuffixed_traits(ctx, groups, rows_by_group):
    group = groups.get('')
    if group is None or not (group.required or group.forbidden):
        return {}
    candidates_db.trait_ids_or_400(ctx, group.required_names
                                   | group.forbidden)
    rp_ids = {row[0] for rows in rows_by_group[''].values() for row in rows}
    return {rp: set(names)
            for rp, names in traits.provider_traits(ctx, rp_ids).items()}


def find_candidates(ctx, groups, options, others, version):
    """Allocation candidates (with rp ids) for parsed request groups."""
    ordered = [groups[s] for s in sorted(groups)]
    rows_by_group = {
        g.suffix: candidates_db.providers_for_group(ctx, g, bool(g.suffix))
        for g in ordered}
    allowed_roots = _root_filter(ctx, others, version, rows_by_group)
    traits_of = _unsuffixed_traits(ctx, groups, rows_by_group)
    parents = None
    if options.same_subtree:
        roots = {row[1] for per_rc in rows_by_group.values()
                 for rows in per_rc.values() for row in rows}
        parents = candidates_db.tree_parents(ctx, roots)
    return candidates.combine(ordered, rows_by_group, options, traits_of,
                              parents, allowed_roots)


def _summaries(ctx, found, groups, version):
    used_ids = {rp for c in found for rp in c.allocations}
    rows = providers.get_providers_by_ids(ctx, used_ids)
    if mv.allow_nested_candidates(version):
        rows = providers.get_tree_providers(
            ctx, {r['root_provider_id'] for r in rows})
    ids = [r['id'] for r in rows]
    invs = inventories.get_inventories(ctx, ids)
    used = inventories.get_usages(ctx, ids)
    trait_names = (traits.provider_traits(ctx, ids)
                   if mv.allow_candidate_traits(version) else {})
    requested = {rc for g in groups.values() for rc in g.resources}
    summaries = {}
    for row in rows:
        resources = {
            rc: {'capacity': inventories.capacity(inv),
                 'used': used[row['id']].get(rc, 0)}
            for rc, inv in invs[row['id']].items()
            if mv.allow_full_summaries(version) or rc in requested}
        summary = {'resources': resources}
        if mv.allow_candidate_traits(version):
            summary['traits'] = trait_names[row['id']]
        if mv.allow_nested_candidates(version):
            summary['parent_provider_uuid'] = row['parent_provider_uuid']
            summary['root_provider_uuid'] = row['root_provider_uuid']
        summaries[row['uuid']] = summary
    return summaries, {r['id']: r['uuid'] for r in rows}


def _allocation_request(candidate, uuid_of, version):
    if not mv.allow_dict_allocations(version):
        return {'allocations': [
            {'resource_provider': {'uuid': uuid_of[rp]}, 'resources': res}
            for rp, res in candidate.allocations.items()]}
    body = {'allocations': {uuid_of[rp]: {'resources': res}
                            for rp, res in candidate.allocations.items()}}
    if mv.allow_mappings(version):
        body['mappings'] = {suffix: [uuid_of[rp] for rp in rps]
                            for suffix, rps in candidate.mappings.items()}
    return body


def list_allocation_candidates(req):
    common.require(req, mv.allow_allocation_candidates)
    version = common.version(req)
    ctx = common.context(req)
    groups, others = _parse(req, version)
    options = _options(groups, others)
    with ctx.facade.reader.using(ctx):
        found = find_candidates(ctx, groups, options, others, version)
        summaries, uuid_of = _summaries(ctx, found, groups, version)
    return common.json_response({
        'allocation_requests': [_allocation_request(c, uuid_of, version)
                                for c in found],
        'provider_summaries': summaries})
