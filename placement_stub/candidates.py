"""Combining request groups into allocation candidates (pure logic).

Input is what the SQL prefilter found: for each group and resource class,
the providers with enough free capacity, as ``(rp_id, root_id, free)``.
Only trees that appear for every (group, class) pair are walked, in root
order, stopping once ``limit`` candidates exist.
"""

import dataclasses
import itertools


@dataclasses.dataclass
class Options:
    """The global parameters of a candidates request."""

    group_policy: str = 'none'
    limit: int = None
    same_subtree: list = dataclasses.field(default_factory=list)
    # Before 1.29 a candidate takes from one provider per tree at most.
    nested_aware: bool = True


@dataclasses.dataclass
class Candidate:
    """One allocation request: ``{rp_id: {rc: n}}`` and group mappings."""

    allocations: dict
    mappings: dict


def _index(rows_by_group):
    """{(suffix, rc): {root_id: [rp_id]}} and {(rp_id, rc): free}."""
    by_root, free = {}, {}
    for suffix, per_rc in rows_by_group.items():
        for rc, rows in per_rc.items():
            roots = by_root.setdefault((suffix, rc), {})
            for rp_id, root_id, rp_free in rows:
                roots.setdefault(root_id, []).append(rp_id)
                free[(rp_id, rc)] = rp_free
    return by_root, free


def candidate_roots(by_root, allowed_roots=None) -> list:
    """Roots present for every (group, class) pair, in ascending order."""
    root_sets = [set(roots) for roots in by_root.values()]
    if not root_sets:
        return []
    common = set.intersection(*root_sets)
    if allowed_roots is not None:
        common &= allowed_roots
    return sorted(common)


def _group_choices(group, root, by_root):
    """Each way one group can be served inside one tree; a resourceless
    group's providers serve the class None."""
    classes = list(group.resources) or [None]
    lists = [by_root[(group.suffix, rc)].get(root, []) for rc in classes]
    if group.suffix:
        common = set.intersection(*(set(rps) for rps in lists))
        return [{rc: rp for rc in classes}
                for rp in lists[0] if rp in common]
    return [dict(zip(group.resources, combo, strict=True))
            for combo in itertools.product(*lists)]


def _isolated(choice, groups):
    seen = set()
    for group, served in zip(groups, choice, strict=True):
        if not group.suffix:
            continue
        rps = set(served.values())
        if rps & seen:
            return False
        seen |= rps
    return True


def _traits_ok(choice, groups, traits_of):
    for group, served in zip(groups, choice, strict=True):
        if group.suffix or not (group.required or group.forbidden):
            continue
        have = set().union(*(traits_of.get(rp, set())
                             for rp in served.values()))
        if have & group.forbidden:
            return False
        if not all(names & have for names in group.required):
            return False
    return True


def _ancestors(rp, parents):
    chain = [rp]
    while parents.get(rp) is not None:
        rp = parents[rp]
        chain.append(rp)
    return chain


def _same_subtree_ok(mappings, same_subtree, parents):
    for suffixes in same_subtree:
        rps = {rp for s in suffixes for rp in mappings.get(s, [])}
        chains = [set(_ancestors(rp, parents)) for rp in rps]
        if not any(all(top in chain for chain in chains) for top in rps):
            return False
    return True


def _key(candidate):
    return (tuple(sorted((rp, tuple(sorted(res.items())))
                         for rp, res in candidate.allocations.items())),
            tuple(sorted((s, tuple(rps))
                         for s, rps in candidate.mappings.items())))


def _allocations(choice, amounts):
    """``{rp: {rc: n}}`` of one choice, summed over the groups."""
    allocations = {}
    for resources, served in zip(amounts, choice, strict=True):
        for rc, rp in served.items():
            if rc is None:
                continue
            per_rp = allocations.get(rp)
            if per_rp is None:
                allocations[rp] = {rc: resources[rc]}
            else:
                per_rp[rc] = per_rp.get(rc, 0) + resources[rc]
    return allocations


def _mappings(choice, suffixes):
    mappings = {}
    for suffix, served in zip(suffixes, choice, strict=True):
        rps = mappings.get(suffix)
        if rps is None:
            mappings[suffix] = list(dict.fromkeys(served.values()))
        else:
            rps.extend(rp for rp in dict.fromkeys(served.values())
                       if rp not in rps)
    return mappings


def _one_provider_per_tree(allocations, real_roots):
    """Whether no two providers of ``allocations`` share a tree."""
    roots = {real_roots.get(rp, rp) for rp in allocations}
    return len(roots) == len(allocations)


def _tree_candidates(root, groups, by_root, free, options, traits_of,
                     parents, real_roots):
    """The candidates of one tree, in the order of the groups' choices.

    A choice fits when every provider has the free capacity for what all
    groups take from it; the allocations are summed once per choice, as
    this loop runs once per returned candidate.
    """
    per_group = [_group_choices(g, root, by_root) for g in groups]
    isolate = options.group_policy == 'isolate'
    check_traits = any(not g.suffix and (g.required or g.forbidden)
                       for g in groups)
    amounts = [g.resources for g in groups]
    suffixes = [g.suffix for g in groups]
    for choice in itertools.product(*per_group):
        if isolate and not _isolated(choice, groups):
            continue
        allocations = _allocations(choice, amounts)
        if not all(amount <= free[(rp, rc)]
                   for rp, per_rp in allocations.items()
                   for rc, amount in per_rp.items()):
            continue
        if check_traits and not _traits_ok(choice, groups, traits_of):
            continue
        if not options.nested_aware and not _one_provider_per_tree(
                allocations, real_roots):
            continue
        candidate = Candidate(allocations, _mappings(choice, suffixes))
        if options.same_subtree and not _same_subtree_ok(
                candidate.mappings, options.same_subtree, parents):
            continue
        yield candidate


def combine(groups, rows_by_group, options, traits_of=None, parents=None,
            allowed_roots=None, real_roots=None, seen=None) -> list:
    """The allocation candidates, at most ``options.limit`` of them.

    A row's root is the tree it serves: a sharing provider's rows come
    once more under each root it shares with. ``real_roots`` maps a
    provider to the root of its own tree; ``seen`` (the keys of the
    candidates found so far) keeps a candidate found under two roots
    from coming twice.
    """
    by_root, free = _index(rows_by_group)
    result = []
    seen = set() if seen is None else seen
    for root in candidate_roots(by_root, allowed_roots):
        for candidate in _tree_candidates(root, groups, by_root, free,
                                          options, traits_of or {},
                                          parents or {}, real_roots or {}):
            key = _key(candidate)
            if key in seen:
                continue
            seen.add(key)
            result.append(candidate)
            if options.limit is not None and len(result) >= options.limit:
                return result
    return result
