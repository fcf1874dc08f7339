"""Query-string parsing of request groups."""

import pytest
from webob.multidict import MultiDict

from placement_stub import request_groups as rg


def test_parse_resources():
    assert rg.parse_resources('VCPU:1,MEMORY_MB:512') == {
        'VCPU': 1, 'MEMORY_MB': 512}
    assert rg.parse_resources('VCPU:2147483647') == {'VCPU': 2147483647}
    for bad in ('VCPU', 'VCPU:0', 'vcpu:1', 'VCPU:1,VCPU:2', 'VCPU:x',
                'VCPU:2147483648'):
        with pytest.raises(rg.QueryError):
            rg.parse_resources(bad)


def test_parse_traits_by_version():
    assert rg.parse_traits(['A,!B'], (1, 22)) == ([{'A'}], {'B'})
    with pytest.raises(rg.QueryError):
        rg.parse_traits(['!B'], (1, 21))
    assert rg.parse_traits(['in:A,B', 'C'], (1, 39)) == (
        [{'A', 'B'}, {'C'}], set())
    with pytest.raises(rg.QueryError):
        rg.parse_traits(['in:A,B'], (1, 38))


def test_suffixes_by_version():
    assert rg.split_key('resources1', (1, 25)) == ('resources', '1')
    assert rg.split_key('resources_a', (1, 25)) == (None, None)
    assert rg.split_key('resources_a', (1, 33)) == ('resources', '_a')
    assert rg.split_key('resources1', (1, 24)) == (None, None)


def test_parse_groups():
    params = MultiDict([('resources', 'VCPU:1'),
                        ('resources_dp', 'FPGA:1'),
                        ('required_dp', 'CUSTOM_X'),
                        ('group_policy', 'none')])
    groups, others = rg.parse_groups(params, (1, 36), {'group_policy'})
    assert groups['_dp'].resources == {'FPGA': 1}
    assert groups['_dp'].required == [{'CUSTOM_X'}]
    assert others == {'group_policy': ['none']}
    with pytest.raises(rg.QueryError):
        rg.parse_groups(MultiDict([('bogus', '1')]), (1, 36), set())


def test_repeated_required_before_any_traits_keeps_the_last():
    """Before 1.39 only the last ``required`` counts, as in Placement."""
    assert rg.parse_traits(['A', 'B'], (1, 38)) == ([{'B'}], set())
    assert rg.parse_traits(['A', 'B'], (1, 39)) == ([{'A'}, {'B'}], set())
    with pytest.raises(rg.QueryError, match='empty trait'):
        rg.parse_traits(['A,,B'], (1, 22))


def test_parse_member_of():
    a, b = ('aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa',
            'bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb')
    assert rg.parse_member_of(['in:%s,%s' % (a, b), '!' + a], (1, 32)) == (
        [{a, b}], {a})
    assert rg.parse_member_of(['!in:%s,%s' % (a, b)], (1, 32)) == (
        [], {a, b})
    with pytest.raises(rg.QueryError, match="prefixed with the 'in:'"):
        rg.parse_member_of(['%s,%s' % (a, b)], (1, 32))
    with pytest.raises(rg.QueryError, match='not supported in the'):
        rg.parse_member_of(['!' + a], (1, 31))
    with pytest.raises(rg.QueryError, match='not supported'):
        rg.parse_member_of([a, b], (1, 23))


def test_parse_root_required():
    assert rg.parse_root_required(['A,!B'], (1, 35)) == ([{'A'}], {'B'})
    for values, code in ((['A', 'B'], 'placement.query.duplicate_key'),
                         (['A,!A'], 'placement.query.bad_value'),
                         (['in:A,B'], 'placement.undefined_code')):
        with pytest.raises(rg.QueryError) as raised:
            rg.parse_root_required(values, (1, 39))
        assert raised.value.code == code
