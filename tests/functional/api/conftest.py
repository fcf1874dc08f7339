import pytest

from tests.fixtures import cyborg_api


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    """One all-in-one stack (SQLite) per test module."""
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack'),
                                hosts=2) as s:
        yield s


@pytest.fixture
def admin(stack):
    return stack.client(cyborg_api.ADMIN)


@pytest.fixture
def service(stack):
    return stack.client(cyborg_api.SERVICE)
