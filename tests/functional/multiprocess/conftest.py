"""Fixtures of the multi-process suite: one topology per module.

The suite needs a RabbitMQ and a PostgreSQL server (``eval
"$(tools/test-setup.sh start)"``) and skips without them.
"""

import os

import pytest

from tests.fixtures import databases
from tests.fixtures import processes
from tests.functional.multiprocess import topology as topology_mod

RABBIT_ENV = 'CYBORG_LITE_TEST_RABBIT_URL'


def require_servers():
    missing = [env for env in (RABBIT_ENV, databases.PG_ENV)
               if not os.environ.get(env)]
    if missing:
        pytest.skip('%s not set: the multi-process suite needs RabbitMQ '
                    'and PostgreSQL (eval "$(tools/test-setup.sh start)")'
                    % ' and '.join(missing))


@pytest.fixture(scope='module')
def topology(tmp_path_factory):
    require_servers()
    # nova-shim-compute drives libvirt's test driver.
    pytest.importorskip('libvirt')
    with processes.running(topology_mod.Topology(
            tmp_path_factory.mktemp('multiprocess'),
            os.environ[RABBIT_ENV])) as topo:
        yield topo
