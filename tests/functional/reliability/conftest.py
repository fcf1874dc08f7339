"""Fixtures of the reliability suite: our own RabbitMQ and PostgreSQL
(the tests stop them), one reliability topology for the whole suite,
and a results hook.

Each test records what it did with the ``results`` fixture (faults
injected, requests sent, errors, data lost). When
``CYBORG_LITE_RELIABILITY_RESULTS`` names a file, the records, with each
test's outcome and duration, are written there as JSON at the end of the
session; ``tests.functional.reliability.report`` prints them as a
table.
"""

import json
import os
import shutil
import tempfile
import time

import pytest

from tests.fixtures import processes
from tests.functional.multiprocess import conftest as mp_conftest
from tests.functional.reliability import harness
from tests.functional.reliability import servers as servers_mod

RESULTS_ENV = 'CYBORG_LITE_RELIABILITY_RESULTS'
_RECORDS = {}


@pytest.fixture(scope='session')
def own_servers():
    # Like the multi-process suite, run where the test servers are set
    # up, or when asked to (the report command).
    if os.environ.get('CYBORG_LITE_RELIABILITY') != '1':
        mp_conftest.require_servers()
    if not os.path.exists('/usr/lib/rabbitmq/bin/rabbitmq-server'):
        pytest.skip('RabbitMQ is not installed')
    directory = tempfile.mkdtemp(prefix='cyborg-lite-reliability-')
    # PostgreSQL runs as the postgres user, which must reach its dir.
    os.chmod(directory, 0o755)
    servers = servers_mod.Servers(directory)
    try:
        yield servers.start()
    finally:
        servers.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope='session')
def topology(own_servers, tmp_path_factory):
    pytest.importorskip('libvirt')
    with processes.running(harness.ReliabilityTopology(
            tmp_path_factory.mktemp('reliability'), own_servers)) as topo:
        yield topo


@pytest.fixture
def healthy(topology):
    """The topology, checked healthy before and after the test."""
    _wait_healthy(topology)
    yield topology
    _wait_healthy(topology)
    assert topology.check_invariants() == []


def _wait_healthy(topology, timeout=90):
    client = topology.admin()
    deadline = time.monotonic() + timeout
    while True:
        try:
            if client.get('/device_profiles', timeout=10).status_code == 200:
                return
        except Exception:
            pass
        assert time.monotonic() < deadline, 'the API did not recover'
        time.sleep(0.5)


@pytest.fixture
def results(request):
    """A dict the test fills: ``fault``, ``requests``, ``errors``,
    ``lost``, ``max_wait`` (seconds, where it made HTTP calls) and
    free-form ``notes``."""
    record = {'fault': '', 'requests': 0, 'errors': 0, 'lost': 0,
              'max_wait': '', 'notes': ''}
    _RECORDS[request.node.nodeid] = record
    return record


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    record = _RECORDS.get(item.nodeid)
    if record is None:
        return
    if report.when == 'call' or report.failed:
        record.setdefault('outcome', 'passed')
        if report.failed:
            record['outcome'] = 'failed (%s)' % report.when
        elif report.skipped:
            record['outcome'] = 'skipped'
    if report.when == 'call':
        record['seconds'] = round(report.duration, 1)


def pytest_sessionfinish(session):
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, 'w') as f:
            json.dump(_RECORDS, f, indent=1, sort_keys=True)
