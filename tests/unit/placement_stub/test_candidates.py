"""Combining request groups into candidates, without a database."""

from placement_stub import candidates
from placement_stub.request_groups import RequestGroup

# Tree 1: root 1 (VCPU 4) with FPGA children 2 and 3; tree 4: root only.
ROWS = {
    '': {'VCPU': [(1, 1, 4), (4, 4, 4)]},
    '_a': {'FPGA': [(2, 1, 1), (3, 1, 1)]},
}
GROUPS = [RequestGroup('', {'VCPU': 1}), RequestGroup('_a', {'FPGA': 1})]


def test_only_trees_with_every_group():
    found = candidates.combine(GROUPS, ROWS, candidates.Options())
    assert [c.mappings for c in found] == [
        {'': [1], '_a': [2]}, {'': [1], '_a': [3]}]


def test_limit_stops_early():
    found = candidates.combine(GROUPS, ROWS, candidates.Options(limit=1))
    assert len(found) == 1


def test_isolate_and_capacity():
    groups = [RequestGroup('_a', {'FPGA': 1}), RequestGroup('_b',
                                                            {'FPGA': 1})]
    rows = {'_a': {'FPGA': [(2, 1, 2)]}, '_b': {'FPGA': [(2, 1, 2)]}}
    shared = candidates.combine(groups, rows, candidates.Options())
    assert len(shared) == 1
    assert shared[0].allocations == {2: {'FPGA': 2}}
    assert candidates.combine(groups, rows,
                              candidates.Options('isolate')) == []
    rows = {'_a': {'FPGA': [(2, 1, 1)]}, '_b': {'FPGA': [(2, 1, 1)]}}
    assert candidates.combine(groups, rows, candidates.Options()) == []


def test_unsuffixed_spreads_and_traits_union():
    group = RequestGroup('', {'VCPU': 1, 'FPGA': 1}, required=[{'T'}])
    rows = {'': {'VCPU': [(1, 1, 4)], 'FPGA': [(2, 1, 1)]}}
    found = candidates.combine([group], rows, candidates.Options(),
                               traits_of={2: {'T'}})
    assert found[0].allocations == {1: {'VCPU': 1}, 2: {'FPGA': 1}}
    assert candidates.combine([group], rows, candidates.Options(),
                              traits_of={}) == []


def test_same_subtree():
    groups = [RequestGroup('_a', {'FPGA': 1}), RequestGroup('_b',
                                                            {'VGPU': 1})]
    rows = {'_a': {'FPGA': [(3, 1, 1)]}, '_b': {'VGPU': [(4, 1, 1)]}}
    parents = {1: None, 2: 1, 3: 2, 4: 1}
    opts = candidates.Options(same_subtree=[['_a', '_b']])
    assert candidates.combine(groups, rows, opts, parents=parents) == []
    parents[4] = 3
    assert len(candidates.combine(groups, rows, opts, parents=parents)) == 1
