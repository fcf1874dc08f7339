import microversion_parse
import pytest

from cyborg_lite import exception
from cyborg_lite.api import microversion

V = microversion_parse.Version


@pytest.mark.parametrize('header, version', [
    (None, V(2, 0)),
    ('accelerator 2.1', V(2, 1)),
    ('2.2', V(2, 2)),
    ('accelerator latest', V(2, 3)),
    ('latest', V(2, 3)),
    ('compute 2.90', V(2, 0)),
])
def test_parse(header, version):
    headers = {} if header is None else {'OpenStack-API-Version': header}
    assert microversion.parse(headers) == version


@pytest.mark.parametrize('header, text', [
    ('accelerator 2.9', 'Version 2.9 was requested but the minor version '
                        'is not supported'),
    ('3.0', 'Mutually exclusive versions requested'),
    ('accelerator 10', 'Invalid value for OpenStack-API-Version header'),
    ('garbage', 'Invalid value for OpenStack-API-Version header'),
])
def test_not_acceptable(header, text):
    with pytest.raises(exception.NotAcceptable) as info:
        microversion.parse({'OpenStack-API-Version': header})
    assert text in info.value.message


def test_predicates():
    assert not microversion.allow_project_id_patch(V(2, 0))
    assert microversion.allow_project_id_patch(V(2, 1))
    assert not microversion.allow_device_profile_by_name(V(2, 1))
    assert microversion.allow_device_profile_by_name(V(2, 2))
    assert not microversion.allow_device_status(V(2, 2))
    assert microversion.allow_device_status(V(2, 3))


def test_versions_table_matches_range():
    assert microversion.VERSIONS[0] == str(microversion.MIN_VERSION)
    assert microversion.VERSIONS[-1] == str(microversion.MAX_VERSION)
