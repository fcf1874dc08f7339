"""Each real client runs against placement_stub and, to show that the
test asks only what Placement itself answers, against the real Placement
(in-process, ``tests.fixtures.real_placement``)."""

import pytest

from tests.fixtures import real_placement


@pytest.fixture(scope='module', params=real_placement.UNDER_TEST)
def placement(request):
    """An object with ``endpoint``: the Placement under test."""
    with real_placement.under_test(request.param) as under_test:
        yield under_test
