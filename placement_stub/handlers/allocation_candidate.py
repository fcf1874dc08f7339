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
from placement_stub.schemas import allocation_candidate as schema
from placement_stub.schemas import common as schema_common


def _allowed_globals(version):
    allowed = set()
    for predicate, name in ((mv.allow_limit, 'limit'),
                            (mv.allow_granular, 'group_policy'),
                            (mv.allow_root_required, 'root_required'),
                            (mv.allow_same_subtree, 'same_subtree')):
        if predicate(version):
            allowed.add(name)
    return allowed


def _check_orphans(groups):
    """Before 1.36, every group needs resources."""
    resourceless = {suffix: group for suffix, group in groups.items()
                    if not group.resources}
    orphans = ['required' + suffix for suffix, group in resourceless.items()
               if group.required]
    if orphans:
        raise errors.bad_request(
            'All traits parameters must be associated with resources.  '
            'Found the following orphaned traits keys: %s'
            % ', '.join(orphans))
    orphans = ['member_of' + suffix for suffix, group in resourceless.items()
               if group.member_of or group.forbidden_aggs]
    if orphans:
        raise errors.bad_request(
            'All member_of parameters must be associated with resources. '
            'Found the following orphaned member_of keys: %s'
            % ', '.join(orphans))
    if resourceless:
        raise errors.bad_request('All request groups must specify resources.')
    if not groups:
        raise errors.bad_request(
            'At least one request group (`resources` or `resources{$S}`) is '
            'required.')


def _check_resourceless(groups, same_subtree):
    """From 1.36: some group must have resources, and a suffixed group
    without any must be in ``same_subtree``, whose suffixes must all be
    groups'."""
    resourceless = [s for s, group in groups.items() if not group.resources]
    if len(resourceless) == len(groups):
        raise errors.bad_request(
            'There must be at least one resources or resources[$S] '
            'parameter.', errors.QUERYPARAM_MISSING_VALUE)
    in_subtree = set().union(*same_subtree)
    bad = [s for s in resourceless if s not in in_subtree]
    if bad:
        raise errors.bad_request(
            'Resourceless suffixed group request should be specified in '
            '`same_subtree` query param: bad group(s) - %s.' % bad,
            errors.QUERYPARAM_BAD_VALUE)
    bad = [s for s in sorted(in_subtree) if s not in groups]
    if bad:
        raise errors.bad_request(
            'Real suffixes should be specified in `same_subtree`: %s not '
            'found in %s.' % (bad, list(groups)), errors.QUERYPARAM_BAD_VALUE)


def _check_conflicts(groups):
    """400 for a group that forbids every trait of one of its any-of
    sets."""
    conflicts = ['required%s: (%s)' % (suffix, ', '.join(sorted(names)))
                 for suffix, group in groups.items()
                 for names in group.required
                 if names <= group.forbidden]
    if conflicts:
        raise errors.bad_request(
            'Conflicting required and forbidden traits found in the '
            'following traits keys: %s' % ', '.join(sorted(conflicts)))


def _same_subtree(others):
    """The ``same_subtree`` values as lists of suffixes."""
    result = []
    for value in others.get('same_subtree', []):
        suffixes = list(dict.fromkeys(s.strip() for s in value.split(',')))
        if '' in suffixes:
            raise errors.bad_request(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', errors.QUERYPARAM_BAD_VALUE)
        result.append(suffixes)
    return result


def _options(groups, others, version):
    """The request-wide parameters; the first of repeated values counts,
    as in Placement."""
    policy = others.get('group_policy', [None])[0]
    if policy is None and len([s for s in groups if s]) > 1:
        raise errors.bad_request(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')
    limit = others.get('limit', [None])[0]
    if limit is not None:
        common.validate_query_value('limit', limit, schema.LIMIT)
        # Any larger limit asks for all of them, as in Placement (which
        # slices a list); the database's LIMIT takes no larger value.
        limit = min(int(limit), schema_common.MAX_INT)
    return candidates.Options(policy or 'none', limit,
                              _same_subtree(others),
                              mv.allow_nested_candidates(version))


def _parse(req, version):
    """The request groups and the other parameters, checked as
    Placement checks them."""
    common.validate_query(req, schema.get_schema(version))
    try:
        groups, others = request_groups.parse_groups(
            req.GET, version, _allowed_globals(version))
    except request_groups.QueryError as exc:
        raise errors.bad_request(str(exc), exc.code)
    if mv.allow_same_subtree(version):
        _check_resourceless(groups, _same_subtree(others))
    else:
        _check_orphans(groups)
    if mv.allow_forbidden_traits(version):
        _check_conflicts(groups)
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
                self.root_traits = request_groups.parse_root_required(
                    values, version)
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


class _Sharing:
    """The sharing providers and their rows for every request group,
    added to each slice's rows under the roots they share with."""

    def __init__(self, ctx, queries):
        self.anchors = candidates_db.sharing_anchors(ctx)
        self.rows = (queries.sharing_rows(ctx, self.anchors)
                     if self.anchors else {})

    def roots(self) -> dict:
        """``{rp_id: root_id}`` of the sharing providers' own trees."""
        return {row[0]: row[1] for per_rc in self.rows.values()
                for rows in per_rc.values() for row in rows}

    def add_to(self, rows_by_group, lo, hi) -> dict:
        """``rows_by_group`` with each sharing row once more under each
        root in (lo, hi] that its provider shares with."""
        if not self.rows:
            return rows_by_group
        result = {}
        for suffix, per_rc in rows_by_group.items():
            result[suffix] = {}
            for rc, rows in per_rc.items():
                shared = [(rp_id, anchor, free)
                          for rp_id, _root, free in self.rows[suffix][rc]
                          for anchor in sorted(self.anchors[rp_id])
                          if lo < anchor <= hi]
                result[suffix][rc] = list(rows) + shared
        return result


def find_candidates(ctx, groups, options, others, version):
    """Allocation candidates for parsed request groups.

    Returns ``(candidates, root_of)``: ``root_of`` maps every provider in
    the candidates to its root provider id.
    """
    ordered = [groups[s] for s in sorted(groups)]
    queries = candidates_db.GroupQueries(ctx, ordered)
    filters = _Filters(ctx, groups, options, others, version)
    sharing = _Sharing(ctx, queries)
    found, root_of, seen = [], sharing.roots(), set()

    def add(rows_by_group, limit, lo=candidates_db.NO_LOWER_BOUND,
            hi=candidates_db.NO_UPPER_BOUND):
        for per_rc in rows_by_group.values():
            for rows in per_rc.values():
                root_of.update((row[0], row[1]) for row in rows)
        rows_by_group = sharing.add_to(rows_by_group, lo, hi)
        allowed_roots, traits_of, parents = filters.load(ctx, rows_by_group)
        more = candidates.combine(
            ordered, rows_by_group,
            dataclasses.replace(options, limit=limit), traits_of, parents,
            allowed_roots, root_of, seen)
        found.extend(more)

    if options.limit is None:
        add(queries.rows(ctx), None)
        return found, root_of
    after, size, roots_seen = candidates_db.NO_LOWER_BOUND, FIRST_SLICE, 0
    while len(found) < options.limit:
        roots = candidates_db.next_roots(ctx, after, size)
        last = len(roots) < size
        hi = candidates_db.NO_UPPER_BOUND if last else roots[-1]
        add(queries.rows(ctx, after, hi), options.limit - len(found),
            after, hi)
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
    options = _options(groups, others, version)
    with ctx.facade.reader.using(ctx):
        found, root_of = find_candidates(ctx, groups, options, others,
                                         version)
        summaries, uuid_of = _summaries(ctx, found, root_of, groups,
                                        version)
    return common.json_response({
        'allocation_requests': [_allocation_request(c, uuid_of, version)
                                for c in found],
        'provider_summaries': summaries})
