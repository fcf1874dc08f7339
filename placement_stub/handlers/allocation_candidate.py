"""Handler for GET /allocation_candidates.

SQL finds, per request group and resource class, the providers with
capacity, one slice of consecutive root ids at a time; candidates.combine()
walks only the trees present in every result, and slices stop once
``limit`` candidates exist; summaries are loaded for the trees that made
the cut.
"""

import dataclasses

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


class _Filters:
    """The post-SQL filters of a request, validated before any query.

    ``root_required`` (roots whose own traits pass), the unsuffixed
    group's traits (checked over the union of its providers) and the
    parents ``same_subtree`` needs are loaded per slice of trees, for the
    providers of that slice only.
    """

    def __init__(self, ctx, groups, options, others, version):
        values = others.get('root_required')
        self.root_traits = None
        if values:
            try:
                self.root_traits = request_groups.parse_traits(values,
                                                               version)
            except request_groups.QueryError as exc:
                raise errors.bad_request(str(exc), exc.code)
            candidates_db.trait_ids_or_400(
                ctx, {n for names in self.root_traits[0] for n in names}
                | set(self.root_traits[1]))
        group = groups.get('')
        self.unsuffixed_traits = group is not None and bool(
            group.required or group.forbidden)
        if self.unsuffixed_traits:
            candidates_db.trait_ids_or_400(ctx, group.required_names
                                           | group.forbidden)
        self.same_subtree = bool(options.same_subtree)

    def load(self, ctx, rows_by_group):
        """(allowed_roots, traits_of, parents) for one slice's rows."""
        roots = {row[1] for per_rc in rows_by_group.values()
                 for rows in per_rc.values() for row in rows}
        allowed_roots = None
        if self.root_traits is not None:
            allowed_roots = candidates_db.roots_with_traits(
                ctx, roots, *self.root_traits)
        traits_of = {}
        if self.unsuffixed_traits:
            rp_ids = {row[0] for rows in rows_by_group[''].values()
                      for row in rows}
            traits_of = {rp: set(names) for rp, names in
                         traits.provider_traits(ctx, rp_ids).items()}
        parents = (candidates_db.tree_parents(ctx, roots)
                   if self.same_subtree else None)
        return allowed_roots, traits_of, parents


# Slices of root ids: the first is small; the next ones are sized from
# the candidates per tree seen so far, so that a limit is usually met in
# two slices, and grow geometrically while trees yield nothing.
FIRST_SLICE = 32
MIN_SLICE = 16
SLICE_MARGIN = 1.25


def _next_slice_size(wanted, found, roots_seen, previous):
    if not found:
        return previous * 4
    per_root = found / roots_seen
    return max(MIN_SLICE, int((wanted - found) / per_root * SLICE_MARGIN)
               + 1)


def find_candidates(ctx, groups, options, others, version):
    """Allocation candidates for parsed request groups.

    Returns ``(candidates, root_of)``: ``root_of`` maps every provider in
    the candidates to its root provider id.
    """
    ordered = [groups[s] for s in sorted(groups)]
    queries = candidates_db.GroupQueries(ctx, ordered)
    filters = _Filters(ctx, groups, options, others, version)
    found, root_of = [], {}

    def add(rows_by_group, limit):
        allowed_roots, traits_of, parents = filters.load(ctx, rows_by_group)
        more = candidates.combine(
            ordered, rows_by_group,
            dataclasses.replace(options, limit=limit), traits_of, parents,
            allowed_roots)
        for per_rc in rows_by_group.values():
            for rows in per_rc.values():
                root_of.update((row[0], row[1]) for row in rows)
        found.extend(more)

    if options.limit is None:
        add(queries.rows(ctx), None)
        return found, root_of
    after, size, roots_seen = candidates_db.NO_LOWER_BOUND, FIRST_SLICE, 0
    while len(found) < options.limit:
        roots = candidates_db.next_roots(ctx, after, size)
        last = len(roots) < size
        hi = candidates_db.NO_UPPER_BOUND if last else roots[-1]
        add(queries.rows(ctx, after, hi), options.limit - len(found))
        if last:
            break
        after, roots_seen = hi, roots_seen + len(roots)
        size = _next_slice_size(options.limit, len(found), roots_seen, size)
    return found, root_of


def _summaries(ctx, found, root_of, groups, version):
    with_traits = mv.allow_candidate_traits(version)
    nested = mv.allow_nested_candidates(version)
    if nested:
        # Every provider of the candidates' trees, selected by root.
        roots = {root_of[rp] for c in found for rp in c.allocations}
        rows = providers.get_tree_providers(ctx, roots)
        invs, used, trait_names = candidates_db.tree_details(
            ctx, roots, with_traits)
    else:
        rows = providers.get_providers_by_ids(
            ctx, {rp for c in found for rp in c.allocations})
        ids = [r['id'] for r in rows]
        invs = inventories.get_capacities(ctx, ids)
        used = inventories.get_usages(ctx, ids)
        trait_names = traits.provider_traits(ctx, ids) if with_traits else {}
    full = mv.allow_full_summaries(version)
    requested = {rc for g in groups.values() for rc in g.resources}
    summaries = {}
    no_usage = {}
    for row in rows:
        rp_id = row['id']
        rp_used = used.get(rp_id, no_usage)
        resources = {rc: {'capacity': capacity, 'used': rp_used.get(rc, 0)}
                     for rc, capacity in invs.get(rp_id, ())
                     if full or rc in requested}
        summary = {'resources': resources}
        if with_traits:
            summary['traits'] = trait_names.get(rp_id, [])
        if nested:
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
        found, root_of = find_candidates(ctx, groups, options, others,
                                         version)
        summaries, uuid_of = _summaries(ctx, found, root_of, groups,
                                        version)
    return common.json_response({
        'allocation_requests': [_allocation_request(c, uuid_of, version)
                                for c in found],
        'provider_summaries': summaries})
