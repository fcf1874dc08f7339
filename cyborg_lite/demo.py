"""The all-in-one demo: accelerated guests through their whole life.

It plays what an operator and a user would do, over HTTP only: the admin
creates two device profiles (a whole GPU by PCI passthrough, and a vGPU),
then a user boots one guest with each through nova_shim's compute API,
stops, starts, hard-reboots and deletes them. Each step prints the
instance's state, its ARQs' states and the host devices in the guest's
libvirt XML. At the end it checks that no ARQ, allocation or mdev is
left behind.
"""

import time

import requests

ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin,member,reader'}
USER = {'X-Project-Id': 'demo', 'X-User-Id': 'demo-user',
        'X-Roles': 'member,reader'}
PROFILES = {
    'gpu-passthrough': {'resources:PGPU': '1',
                        'trait:CUSTOM_NVIDIA_20F1': 'required'},
    'vgpu-t4': {'resources:VGPU': '1',
                'trait:CUSTOM_NVIDIA_1EB8_T4_2B': 'required'},
}
FLAVOR = {'vcpus': 2, 'ram': 2048, 'disk': 10}


class DemoError(Exception):
    pass


class GuestDemo:
    def __init__(self, cyborg_url, compute_url, placement_url,
                 mdev_counter, out=print):
        self.cyborg = cyborg_url.rstrip('/') + '/v2'
        self.compute = compute_url.rstrip('/')
        self.placement = placement_url.rstrip('/')
        self.count_mdevs = mdev_counter
        self.out = out
        self.http = requests.Session()

    def _call(self, method, url, expect, headers=USER, **kwargs):
        resp = self.http.request(method, url, headers=headers, timeout=60,
                                 **kwargs)
        if resp.status_code not in expect:
            raise DemoError('%s %s answered %s: %s' % (
                method, url, resp.status_code, resp.text[:300]))
        return resp.json() if resp.content else None

    def server(self, uuid):
        return self._call('GET', '%s/servers/%s' % (self.compute, uuid),
                          (200,))['server']

    def wait(self, uuid, status, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            server = self.server(uuid)
            if server['status'] == status and not server[
                    'OS-EXT-STS:task_state']:
                return server
            if server['status'] == 'ERROR':
                raise DemoError('%s failed: %s' % (
                    server['name'], server.get('fault')))
            time.sleep(0.1)
        raise DemoError('%s did not reach %s' % (uuid, status))

    def show(self, step, server):
        arqs = ', '.join('%s %s' % (a['uuid'][:8], a['state'])
                         for a in server.get('accelerator_requests', ()))
        devs = ', '.join('%s %s' % (d['type'], d['address'])
                         for d in server.get('hostdevs', ()))
        self.out('  %-14s %-8s vm=%-8s power=%-2s ARQs: %-22s hostdevs: %s'
                 % (step, server['status'], server['OS-EXT-STS:vm_state'],
                    server['OS-EXT-STS:power_state'], arqs or '-',
                    devs or '-'))

    def action(self, uuid, body, status):
        self._call('POST', '%s/servers/%s/action' % (self.compute, uuid),
                   (202,), json=body)
        return self.wait(uuid, status)

    def lifecycle(self, name, profile):
        self.out('%s (device profile %s):' % (name, profile))
        flavor = dict(FLAVOR, extra_specs={'accel:device_profile': profile})
        uuid = self._call('POST', self.compute + '/servers', (202,), json={
            'server': {'name': name, 'flavor': flavor}})['server']['id']
        server = self.wait(uuid, 'ACTIVE')
        self.out('  on %s; mdevs on the hosts now: %d' % (
            server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
            self.count_mdevs()))
        self.show('boot', server)
        self.show('stop', self.action(uuid, {'os-stop': None}, 'SHUTOFF'))
        self.show('start', self.action(uuid, {'os-start': None}, 'ACTIVE'))
        self.show('hard reboot', self.action(
            uuid, {'reboot': {'type': 'HARD'}}, 'ACTIVE'))
        self._call('DELETE', '%s/servers/%s' % (self.compute, uuid),
                   (204, 202))
        self._wait_gone(uuid)
        self.out('  %-14s gone' % 'delete')
        return uuid

    def _wait_gone(self, uuid, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            resp = self.http.get('%s/servers/%s' % (self.compute, uuid),
                                 headers=USER, timeout=30)
            if resp.status_code == 404:
                return
            time.sleep(0.1)
        raise DemoError('%s was not deleted' % uuid)

    def left_behind(self, uuids):
        arqs = self._call('GET', self.cyborg + '/accelerator_requests',
                          (200,), headers=ADMIN)['arqs']
        allocations = sum(len(self._call(
            'GET', '%s/allocations/%s' % (self.placement, uuid), (200,),
            headers=ADMIN)['allocations']) for uuid in uuids)
        return len(arqs), allocations, self.count_mdevs()

    def run(self):
        for name, group in PROFILES.items():
            self._call('POST', self.cyborg + '/device_profiles', (201,),
                       headers=ADMIN, json=[{'name': name,
                                             'groups': [group]}])
        uuids = [self.lifecycle('gpu-guest', 'gpu-passthrough'),
                 self.lifecycle('vgpu-guest', 'vgpu-t4')]
        arqs, allocations, mdevs = self.left_behind(uuids)
        self.out('Left behind: %d ARQ(s), %d allocation(s), %d mdev(s)'
                 % (arqs, allocations, mdevs))
        return arqs == allocations == mdevs == 0
