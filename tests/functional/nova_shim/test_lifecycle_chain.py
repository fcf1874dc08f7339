"""The whole chain in one process, for nova_shim's lifecycle tests.

Placement (the stub), nova_shim's compute service (its API over HTTP on
loopback, libvirt's ``test:///default``; it registers the compute-node
providers), and the cyborg-lite stack (API, conductor, fake-driver
agents) on the same Placement: its conductor mirrors the deployables as
child providers of the compute nodes and sends its
``accelerator-request-bound`` events to the compute API.
"""

import time

import requests

from nova_shim.service import ComputeService
from nova_shim import conf as shim_conf

HEADERS = {'X-Project-Id': 'p-demo', 'X-User-Id': 'u-demo',
           'X-Roles': 'member,reader'}
# An admin of the same project: what Nova's default policy keeps for
# admins (shelveOffload, evacuate, the migrations' destinations).
ADMIN_HEADERS = dict(HEADERS, **{'X-User-Id': 'u-admin',
                                 'X-Roles': 'admin,member,reader'})
# The program command: bitstreams named slow-* hang, bad-* fail.
PROGRAM = ('sh -c \'case "$2" in *slow*) sleep 5;; *bad*) exit 1;; esac\' '
           'program')
FPGA_HANDLES = 4


class Chain:
    def __init__(self, tmp_path, hosts: int = 1,
                 host_kinds: list[str] | None = None) -> None:
        self.tmp_path = tmp_path
        self.hosts = len(host_kinds) if host_kinds else hosts
        self.host_kinds = host_kinds
        self.placement = None
        self.service = None
        self.stack = None

    def start(self) -> 'Chain':
        from placement_stub.fixture import PlacementFixture
        from tests.fixtures import cyborg_api
        from cyborg_lite import allinone

        self.placement = PlacementFixture()
        self.placement.start()
        hostnames = allinone.host_names(self.hosts)
        self.conf = shim_conf.build_conf(overrides={
            (None, 'state_path'): str(self.tmp_path / 'nova-shim'),
            (None, 'host'): 'nova-shim-compute',
            ('api', 'auth_strategy'): 'noauth2',
            ('database', 'sync_on_startup'): True,
            ('compute', 'hypervisor_hostnames'): hostnames,
            ('compute', 'api_port'): 0,
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): self.placement.endpoint,
            ('cyborg', 'auth_type'): 'none',
            ('service_user', 'send_service_user_token'): True,
        })
        self.service = ComputeService(self.conf).start()
        self.stack = cyborg_api.CyborgStack(
            self.tmp_path / 'cyborg', hosts=self.hosts,
            host_kinds=self.host_kinds, overrides={
                ('nova', 'auth_type'): 'none',
                ('nova', 'endpoint_override'): self.service.url + '/v2.1',
                ('nova', 'event_retry_delay'): 0.05,
                ('agent', 'fake_fpga_handles'): FPGA_HANDLES,
                ('agent', 'fpga_program_command'): PROGRAM,
                ('agent', 'bitstream_dir'): str(self.tmp_path),
                ('placement', 'auth_type'): 'none',
                ('placement', 'endpoint_override'): self.placement.endpoint,
            }).start()
        self.conf.set_override('endpoint_override', self.stack.url + '/v2',
                               group='cyborg')
        self.cyborg = self.stack.client(cyborg_api.SERVICE)
        return self

    def stop(self) -> None:
        for part in (self.service, self.stack, self.placement):
            if part is not None:
                part.stop()

    # -- helpers --------------------------------------------------------

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault('headers', HEADERS)
        kwargs.setdefault('timeout', 30)
        return requests.request(method, self.service.url + '/v2.1' + path,
                                **kwargs)

    def create_profile(self, name: str, group: dict) -> None:
        resp = self.stack.client().post('/device_profiles', json=[
            {'name': name, 'groups': [group]}])
        assert resp.status_code == 201, resp.text

    def boot(self, name: str, device_profile: str | None,
             vcpus: int = 1) -> str:
        specs = {'accel:device_profile': device_profile} \
            if device_profile else {}
        resp = self.api('POST', '/servers', json={'server': {
            'name': name, 'flavor': {'name': 'f-' + name, 'vcpus': vcpus,
                                     'ram': 256, 'disk': 1,
                                     'extra_specs': specs}}})
        assert resp.status_code == 202, resp.text
        assert resp.json()['server']['status'] == 'BUILD'
        return resp.json()['server']['id']

    def show(self, server_id: str, headers: dict | None = None) -> dict:
        resp = self.api('GET', '/servers/' + server_id,
                        headers=headers or HEADERS)
        assert resp.status_code == 200, resp.text
        return resp.json()['server']

    def wait(self, server_id: str, *statuses: str,
             timeout: float = 20, headers: dict | None = None) -> dict:
        """The server once in one of ``statuses`` with no task, seen by
        ``headers``' caller (the default project's)."""
        deadline = time.monotonic() + timeout
        while True:
            server = self.show(server_id, headers)
            if server['status'] in statuses and \
                    not server['OS-EXT-STS:task_state']:
                return server
            assert time.monotonic() < deadline, server
            time.sleep(0.05)

    def action(self, server_id: str, body: dict,
               headers: dict | None = None) -> requests.Response:
        return self.api('POST', '/servers/%s/action' % server_id, json=body,
                        headers=headers or HEADERS)

    def allocations(self, server_id: str) -> dict:
        return self.service.deps.placement.get(
            '/allocations/' + server_id,
            microversion='1.36').json()['allocations']

    def cyborg_arqs(self, server_id: str) -> list[dict]:
        resp = self.cyborg.get('/accelerator_requests',
                               params={'instance': server_id})
        # Anything but a 200 is a failure, never "no ARQs".
        assert resp.status_code == 200, resp.text
        return resp.json()['arqs']
