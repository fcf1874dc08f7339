"""Each real client runs against placement_stub and, to show that the
test asks only what Placement itself answers, against the real Placement
(in-process, :mod:`tests.fixtures.real_placement`)."""

import pytest

from placement_stub.fixture import PlacementFixture
from tests.fixtures import real_placement


@pytest.fixture(scope='module', params=['placement_stub', 'placement'])
def placement(request):
    """An object with ``endpoint``: the Placement under test."""
    if request.param == 'placement':
        if not real_placement.available():
            pytest.skip('openstack-placement is not installed')
        yield real_placement.shared()
        return
    with PlacementFixture() as fixture:
        yield fixture
