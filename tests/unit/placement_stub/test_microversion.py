"""Microversion parsing and the version list."""

import pytest

from placement_stub import microversion as mv


def test_list_matches_bounds():
    assert mv.VERSIONS[0] == mv.version_string(mv.MIN_VERSION)
    assert mv.VERSIONS[-1] == mv.version_string(mv.MAX_VERSION)
    assert mv.VERSIONS == ['1.%d' % i for i in range(40)]


def test_extract_version():
    header = 'OpenStack-API-Version'
    assert mv.extract_version({}) == (1, 0)
    assert mv.extract_version({header: 'placement 1.14'}) == (1, 14)
    assert mv.extract_version({header: 'placement latest'}) == (1, 39)
    with pytest.raises(mv.UnacceptableVersion):
        mv.extract_version({header: 'placement 1.40'})
    with pytest.raises(mv.InvalidVersion):
        mv.extract_version({header: 'placement one'})


def test_predicates():
    assert mv.allow_nested((1, 14)) and not mv.allow_nested((1, 13))
    assert mv.allow_mappings((1, 34)) and not mv.allow_mappings((1, 33))
    assert mv.allow_any_traits((1, 39))
