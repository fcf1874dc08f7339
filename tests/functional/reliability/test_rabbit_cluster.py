"""A RabbitMQ cluster node goes away under load.

The services run on a three-node RabbitMQ cluster as the production
guide configures them: ``transport_url`` naming the three nodes, quorum
queues (``[oslo_messaging_rabbit] rabbit_quorum_queue``), heartbeats.
Under 8 clients running Nova's ARQ lifecycle, the node that leads the
conductors' queue is stopped (``rabbitmqctl stop``), and later started
again. No lifecycle fails, no caller waits more than
``CLUSTER_FAULT_BOUND`` seconds, throughput is back within
``RECOVERY_BOUND`` seconds of each change, the agents' reports go on
(a device unplugged after the node's return leaves the database at
the next report), and nothing is lost or stuck in the database.
"""

import os
import shutil
import tempfile
import time

import pytest

from tests.fixtures import processes
from tests.fixtures import rabbit_cluster
from tests.functional.reliability import harness

CLUSTER_FAULT_BOUND = 10.0
RECOVERY_BOUND = 15.0
# Seconds of load before the stop, while the node is down, and after
# it is back.
STEADY = 8
DOWN = 20
BACK = 20
AGENT_HOST = 'compute3'
UNPLUGGED = '0000:3b:00.7'


class ClusterTopology(harness.ReliabilityTopology):
    """The reliability topology on the cluster, configured as the
    production guide says."""

    def _cyborg_sections(self, log_name):
        sections = super()._cyborg_sections(log_name)
        sections['oslo_messaging_rabbit'] = dict(rabbit_cluster.MESSAGING)
        return sections


@pytest.fixture(scope='module')
def cluster_topology(own_servers, tmp_path_factory):
    pytest.importorskip('libvirt')
    directory = tempfile.mkdtemp(prefix='cyborg-lite-cluster-')
    cluster = rabbit_cluster.Cluster(directory)
    # The topology takes its databases from our own PostgreSQL.
    cluster.pg_url = own_servers.pg_url
    try:
        cluster.start()
        topology = ClusterTopology(tmp_path_factory.mktemp('cluster'),
                                   cluster)
        topology.agent_drivers[AGENT_HOST] = 'nvidia_gpu'
        with processes.running(topology) as topo:
            yield cluster, topo
    finally:
        cluster.stop()
        shutil.rmtree(directory, ignore_errors=True)


def _deployables(topology):
    return {row['name'] for row in topology.rows(
        'SELECT p.name FROM deployables p JOIN devices d '
        'ON d.id = p.device_id WHERE d.hostname = :host', host=AGENT_HOST)}


def _recovered_within(load, since, baseline):
    back = load.full_throughput_at(since, baseline)
    return None if back is None else back - since


def test_the_node_leading_the_conductors_queue_stops_and_returns(
        cluster_topology, results):
    cluster, topology = cluster_topology
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    name = AGENT_HOST + '_' + UNPLUGGED
    assert harness.wait_for(lambda: name in _deployables(topology), 30)
    queue = topology._cyborg_sections('x')['conductor']['topic']
    calls = harness.Calls(limit=CLUSTER_FAULT_BOUND + harness.LOADED_MACHINE)
    load = harness.Lifecycles(topology, calls)
    with load:
        time.sleep(STEADY)
        started = time.monotonic()
        baseline = load.per_second(started - STEADY + 2, started)
        node = cluster.leader(queue)
        assert node is not None, queue
        stopped_at = time.monotonic()
        cluster.stop_node(node)
        stop_took = time.monotonic() - stopped_at
        time.sleep(DOWN)
        new_leader = cluster.leader(queue)
        returned_at = time.monotonic()
        cluster.start_node(node)
        time.sleep(BACK)
        ended = time.monotonic()
    check = load.check()
    problems = topology.check_invariants()
    after_stop = _recovered_within(load, stopped_at, baseline)
    after_return = _recovered_within(load, returned_at, baseline)
    # The agents' reports go on: a device unplugged now leaves the
    # database at the next report.
    link = os.path.join(topology.sysfs_root(AGENT_HOST), 'bus', 'pci',
                        'devices', UNPLUGGED)
    target = os.readlink(link)
    os.unlink(link)
    try:
        reported = harness.wait_for(
            lambda: name not in _deployables(topology),
            3 * harness.REPORT_INTERVAL + 10)
    finally:
        os.symlink(target, link)
    assert harness.wait_for(lambda: name in _deployables(topology),
                            3 * harness.REPORT_INTERVAL + 10)
    results.update(
        fault='RabbitMQ cluster of 3, quorum queues: node r%d (leader of '
              'the conductors\' queue) stopped under 8 clients for %d s, '
              'then started again' % (node, DOWN),
        requests=calls.count, errors=len(calls.unclean()),
        lost=len(check['left']) + len(check['bad']) + len(problems),
        max_wait=round(harness.max_wait(calls), 1),
        notes='%d lifecycles in %.0f s, %d failed; %.1f/s before; full '
              'throughput %s s after the stop (the stop took %.1f s; '
              'new leader r%d) and %s s after the return; the agents\' '
              'reports went on' % (
                  len(load.completed), ended - started + STEADY,
                  len(load.failures), baseline,
                  None if after_stop is None else round(after_stop, 1),
                  stop_took, new_leader,
                  None if after_return is None else round(after_return, 1)))
    assert load.failures == [], load.failures[:5]
    assert calls.unclean() == [], calls.unclean()[:5]
    assert harness.max_wait(calls) <= CLUSTER_FAULT_BOUND + \
        harness.LOADED_MACHINE
    assert new_leader != node
    assert after_stop is not None and after_stop <= RECOVERY_BOUND + \
        stop_took, after_stop
    assert after_return is not None and after_return <= RECOVERY_BOUND, \
        after_return
    assert check['left'] == [] and check['bad'] == []
    assert problems == []
    assert reported
