"""The production topology, each service its own OS process.

RabbitMQ and PostgreSQL come from ``tools/test-setup.sh``
(``CYBORG_LITE_TEST_RABBIT_URL``, ``CYBORG_LITE_TEST_PG_URL``). Started
here, from configuration files only:

* ``placement-stub-api`` on its own PostgreSQL database;
* ``cyborg-lite-dbsync upgrade``, then the cyborg-lite API: gunicorn
  with two workers of cyborg-lite's worker class
  (``cyborg_lite.api.gunicorn_worker``) on
  ``cyborg_lite.api.wsgi:application``, and the
  built-in server (``cyborg-lite-api``) beside it on the same services;
* ``nova-shim-compute`` serving the hypervisors compute1..3 (it creates
  their compute-node providers), with its own PostgreSQL database;
* two ``cyborg-lite-conductor`` processes on one topic, their ``[nova]``
  pointed at nova-shim's external events;
* three ``cyborg-lite-agent`` processes, compute1..3, each on its own
  copy of a fixture sysfs tree with its own fake devices.

Topics carry a random suffix, so that runs sharing a broker stay apart.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid

from cyborg_lite.api import gunicorn_worker
from tests.fixtures import databases
from tests.fixtures import processes
from tests.fixtures import sysfs_tree

HOSTS = ('compute1', 'compute2', 'compute3')
# The device that the bind race uses; no guest lands on it, because the
# guests' device profile requires CUSTOM_GUEST.
RACE_HANDLES = 16
HOST_DEVICES = {
    'compute1': ('mixed_host', [
        {'type': 'FPGA', 'address': '0000:0c:00.0', 'handles': RACE_HANDLES,
         'traits': ['CUSTOM_RACE']},
        {'type': 'FPGA', 'address': '0000:0e:00.0', 'handles': 2,
         'traits': ['CUSTOM_GUEST']}]),
    'compute2': ('t4_vgpu', [
        {'type': 'FPGA', 'address': '0000:3b:00.0', 'handles': 2,
         'traits': ['CUSTOM_GUEST']},
        {'type': 'GPU', 'address': '0000:3c:00.0', 'handles': 1}]),
    'compute3': ('a100_sriov', [
        {'type': 'FPGA', 'address': '0000:5e:00.0', 'handles': 2,
         'traits': ['CUSTOM_GUEST']}]),
}
HEADERS = {'X-Project-Id': 'p-mp', 'X-User-Id': 'u-mp',
           'X-Roles': 'member,reader'}
SERVICE_HEADERS = {'X-Project-Id': 'admin-project', 'X-User-Id': 'admin',
                   'X-Roles': 'admin,member,reader',
                   'X-Service-Roles': 'service'}


class Topology:
    def __init__(self, tmp_dir: str, rabbit_url: str) -> None:
        self.tmp = str(tmp_dir)
        self.rabbit_url = rabbit_url
        self.group = processes.ProcessGroup(self.tmp)
        self.suffix = uuid.uuid4().hex[:8]
        self.stack = contextlib.ExitStack()
        self.conductors: list[processes.ServiceProcess] = []
        self.agents: list[processes.ServiceProcess] = []

    # -- config ---------------------------------------------------------

    def _cyborg_sections(self, log_name: str) -> dict:
        return {
            'DEFAULT': {'transport_url': self.rabbit_url,
                        'state_path': self.tmp,
                        'log_file': os.path.join(self.tmp, log_name),
                        'use_stderr': False},
            'database': {'connection': self.cyborg_db,
                         'max_pool_size': 5, 'max_overflow': 10},
            'api': {'auth_strategy': 'noauth', 'host_ip': '127.0.0.1',
                    'port': self.builtin_port,
                    'healthcheck_disable_file':
                        os.path.join(self.tmp, 'healthcheck_disable')},
            'conductor': {'topic': 'cyborg-lite-conductor-' + self.suffix,
                          'sweep_interval': 5},
            'agent': {'topic': 'cyborg-lite-agent-' + self.suffix},
            'nova': {'auth_type': 'none',
                     'endpoint_override': self.nova_url + '/v2.1',
                     'event_retry_delay': 0.2},
            'placement': {'auth_type': 'none',
                          'endpoint_override': self.placement_url},
        }

    def _config(self, name: str, sections: dict) -> str:
        return processes.write_config(
            os.path.join(self.tmp, name + '.conf'), sections)

    # -- start ----------------------------------------------------------

    def start(self) -> 'Topology':
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.placement_db = self.stack.enter_context(
            databases.pg_database())
        self.cyborg_db = self.stack.enter_context(databases.pg_database())
        self.nova_db = self.stack.enter_context(databases.pg_database())
        self.gunicorn_port = processes.free_port()
        self.builtin_port = processes.free_port()
        self.cyborg_url = 'http://127.0.0.1:%d' % self.gunicorn_port
        self.builtin_url = 'http://127.0.0.1:%d' % self.builtin_port
        self._start_placement()
        self._start_nova_shim()
        cyborg_conf = self._config('cyborg-lite',
                                   self._cyborg_sections('api.log'))
        self.group.run(processes.script('cyborg-lite-dbsync') + [
            '--config-file', cyborg_conf, 'upgrade'])
        self._start_apis(cyborg_conf)
        for name in ('conductor-a', 'conductor-b'):
            self._start_conductor(name)
        # A message sent to a topic before a consumer declared its queue
        # is dropped: the agents' first report waits for the conductors.
        for proc in self.conductors:
            proc.wait_for_line(r'listening on topic', timeout=60)
        for host in HOSTS:
            self._start_agent(host)
        for proc in self.agents:
            proc.wait_for_line(r'Agent \S+ started', timeout=90)

    def _start_placement(self) -> None:
        conf = self._config('placement-stub', {
            'api': {'auth_strategy': 'noauth2'},
            'placement_database': {'connection': self.placement_db},
            'placement': {'sync_on_startup': True}})
        proc = self.group.start('placement', processes.script(
            'placement-stub-api') + ['--config-file', conf, '--host',
                                     '127.0.0.1', '--port', '0'])
        self.placement_url = proc.wait_for_line(
            r'serving on (http://\S+)').group(1).rstrip('/')
        proc.wait_for_http(self.placement_url + '/healthcheck')

    def _start_nova_shim(self) -> None:
        conf = self._config('nova-shim', {
            'DEFAULT': {'host': 'nova-shim-compute',
                        'state_path': os.path.join(self.tmp, 'nova-shim'),
                        'arq_binding_timeout': 60},
            'api': {'auth_strategy': 'noauth2'},
            'compute': {'hypervisor_hostnames': list(HOSTS),
                        'api_host': '127.0.0.1', 'api_port': 0},
            'database': {'connection': self.nova_db,
                         'sync_on_startup': True},
            'libvirt': {'connection_uri': 'test:///default'},
            'placement': {'auth_type': 'none',
                          'endpoint_override': self.placement_url},
            'cyborg': {'auth_type': 'none',
                       'endpoint_override': self.cyborg_url + '/v2'},
            'service_user': {'send_service_user_token': True},
        })
        proc = self.group.start('nova-shim-compute', processes.script(
            'nova-shim-compute') + ['--config-file', conf])
        self.nova_url = proc.wait_for_line(
            r'compute API at (http://\S+)/v2\.1', timeout=60).group(1)
        proc.wait_for_http(self.nova_url + '/healthcheck')
        self.nova_shim = proc

    def _start_apis(self, cyborg_conf: str) -> None:
        self.gunicorn = self.group.start(
            'api-gunicorn',
            processes.script('gunicorn') + [
                '--workers', '2', '--threads', '4',
                '--worker-class', gunicorn_worker.WORKER_CLASS, '--bind',
                '127.0.0.1:%d' % self.gunicorn_port, '--timeout', '60',
                '--graceful-timeout', '5', '--no-control-socket',
                'cyborg_lite.api.wsgi:application'],
            env={'CYBORG_LITE_CONFIG_FILES': cyborg_conf})
        builtin_conf = self._config('cyborg-lite-builtin',
                                    self._cyborg_sections('api-builtin.log'))
        self.builtin = self.group.start(
            'api-builtin', processes.script('cyborg-lite-api') + [
                '--config-file', builtin_conf])
        self.gunicorn.wait_for_http(self.cyborg_url + '/healthcheck')
        self.builtin.wait_for_http(self.builtin_url + '/healthcheck')
        # Note the workers, so that teardown can check they are gone.
        self.group._remember(self.gunicorn.pid)

    def _start_conductor(self, name: str) -> None:
        sections = self._cyborg_sections(name + '.log')
        sections['DEFAULT']['host'] = name
        conf = self._config(name, sections)
        self.conductors.append(self.group.start(name, processes.script(
            'cyborg-lite-conductor') + ['--config-file', conf],
            log_file=sections['DEFAULT']['log_file']))

    def _start_agent(self, host: str) -> None:
        tree, devices = HOST_DEVICES[host]
        root = sysfs_tree.copy_tree(tree, os.path.join(self.tmp, host))
        sections = self._cyborg_sections('agent-%s.log' % host)
        sections['DEFAULT']['host'] = host
        sections['agent'].update({
            'enabled_drivers': ['fake'], 'sysfs_root': root,
            'fake_devices': json.dumps(devices),
            'resource_provider_startup_retries': 5,
            'resource_provider_startup_delay': 0.5,
            'bitstream_dir': self.tmp})
        conf = self._config('agent-' + host, sections)
        self.agents.append(self.group.start('agent-' + host, processes.script(
            'cyborg-lite-agent') + ['--config-file', conf],
            log_file=sections['DEFAULT']['log_file']))

    # -- stop -----------------------------------------------------------

    def stop(self) -> list[str]:
        """Stop every process, then drop the databases; returns the
        processes that were still running after the stop (none)."""
        try:
            self.group.stop_all()
            return self.group.leftovers()
        finally:
            self.stack.close()

    def log(self, name: str) -> str:
        path = os.path.join(self.tmp, name)
        if not os.path.exists(path):
            return ''
        with open(path, errors='replace') as f:
            return f.read()
