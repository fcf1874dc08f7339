"""The agent's reports from a host where one device is broken.

A host with a spare card of each driver
(``tests.fixtures.sysfs_tree.spares_host``) has one broken function;
its agent reports to a real conductor, which stores the devices and
shows them at the API. The broken function is left out, every other
card is reported, and a card unplugged later leaves the inventory while
the rest stays.

The last test runs ``cyborg-lite-agent`` as its own process over
RabbitMQ, as a compute host runs it, and skips without the test broker.
"""

import os
import time

import pytest

from cyborg_lite.allinone import hosts as allinone_hosts
from tests.fixtures import cyborg_api
from tests.fixtures import processes
from tests.fixtures import sysfs_tree

RABBIT_ENV = 'CYBORG_LITE_TEST_RABBIT_URL'
T4 = sysfs_tree.SPARES['nvidia_gpu']
A100 = '0000:3b:00.0'
GOOD = ['0000:3b:00.0', '0000:af:00.0', '0000:5e:00.0',
        sysfs_tree.SPARES['intel_fpga'], '0000:d8:00.0',
        sysfs_tree.SPARES['xilinx_fpga']]
DRIVERS = ['nvidia_gpu', 'intel_fpga', 'xilinx_fpga']


def _break_t4(root):
    """The spare T4's vendor file is a link to /dev/zero, out of the
    sysfs root and endless."""
    vendor = sysfs_tree.replace(sysfs_tree.device_file(root, T4, 'vendor'))
    os.symlink('/dev/zero', vendor)


def _host_options(root):
    return {('agent', 'enabled_drivers'): DRIVERS,
            ('agent', 'sysfs_root'): root,
            ('gpu_devices', 'enabled_vgpu_types'): ['nvidia-223'],
            ('gpu_devices', 'filter_sriov_vfs'): True}


def _addresses(stack, hostname):
    """PCI addresses of the host's deployables, as the API shows them."""
    prefix = hostname + '_'
    return sorted(dep['name'][len(prefix):] for dep in
                  stack.client().get('/deployables').json()['deployables']
                  if dep['name'].startswith(prefix))


@pytest.fixture
def root(tmp_path):
    root = sysfs_tree.spares_host(tmp_path / 'host')
    _break_t4(root)
    return root


def test_the_agent_reports_every_good_card(tmp_path, root):
    with cyborg_api.CyborgStack(tmp_path / 'stack', hosts=1, host_overrides={
            0: _host_options(root)}) as stack:
        hostname = stack.aio.hostnames[0]
        [agent] = stack.aio.agents
        # The first report went out when the agent started.
        assert _addresses(stack, hostname) == sorted(GOOD)

        # The A100 is hot-unplugged: the next report drops it only.
        aside = sysfs_tree.unplug(root, A100)
        summary = agent.report()
        assert summary['changed'] is True
        assert _addresses(stack, hostname) == sorted(
            a for a in GOOD if a != A100)

        # Both come back, the T4 repaired: all seven cards are reported.
        sysfs_tree.replug(root, A100, aside)
        with open(sysfs_tree.replace(
                sysfs_tree.device_file(root, T4, 'vendor')), 'w') as f:
            f.write('0x10de\n')
        agent.report()
        assert _addresses(stack, hostname) == sorted(GOOD + [T4])


def test_the_agent_daemon_reports_from_a_broken_host(tmp_path, root):
    rabbit = os.environ.get(RABBIT_ENV)
    if not rabbit:
        pytest.skip('%s not set: this test runs the agent as a process '
                    'over RabbitMQ' % RABBIT_ENV)
    hostname = 'hostile.cyborg-lite.test'
    with cyborg_api.CyborgStack(tmp_path / 'stack', hosts=1, overrides={
            (None, 'transport_url'): rabbit}) as stack:
        aio = stack.aio
        allinone_hosts.register_compute_nodes(aio.conf, [hostname])
        log_file = str(tmp_path / 'agent.log')
        config = processes.write_config(str(tmp_path / 'agent.conf'), {
            'DEFAULT': {'transport_url': rabbit, 'host': hostname,
                        'log_file': log_file, 'use_stderr': False},
            'conductor': {'topic': aio.conf.conductor.topic},
            'agent': {'topic': aio.conf.agent.topic,
                      'enabled_drivers': DRIVERS, 'sysfs_root': root},
            'gpu_devices': {'enabled_vgpu_types': 'nvidia-223',
                            'filter_sriov_vfs': True},
            'placement': {'auth_type': 'none',
                          'endpoint_override': aio.placement_url},
        })
        group = processes.ProcessGroup(str(tmp_path))
        try:
            agent = group.start('agent', processes.script(
                'cyborg-lite-agent') + ['--config-file', config],
                log_file=log_file)
            agent.wait_for_line(r'Agent \S+ started', timeout=90)
            deadline = time.monotonic() + 60
            while (_addresses(stack, hostname) != sorted(GOOD)
                   and time.monotonic() < deadline):
                assert agent.popen.poll() is None, agent.tail()
                time.sleep(0.2)
            assert _addresses(stack, hostname) == sorted(GOOD), agent.tail()
            # Each pass names the broken function once, and why.
            log = agent.read_output()
            lines = [line for line in log.splitlines() if T4 in line]
            assert lines, agent.tail()
            assert all('outside' in line for line in lines), lines
            assert 'Traceback' not in log
        finally:
            group.stop_all()
        assert group.leftovers() == []
