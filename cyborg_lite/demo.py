"""The all-in-one demo: accelerated guests through their whole life.

It plays what an operator and a user would do, over HTTP only: the admin
creates two device profiles (a whole GPU by PCI passthrough, and a vGPU),
then a user boots one guest with each through nova_shim's compute API,
stops, starts, hard-reboots and deletes them. Each step prints the
instance's state, its host, its ARQs' states and the host devices in the
guest's libvirt XML. Then, with two vGPU hosts: a vGPU guest whose first
host's GPU refuses new vGPUs is rescheduled to the other one, and once
that host is marked down, evacuated back to the first (repaired) one,
with new ARQs bound there; once that host is up again, the guest is
cold-migrated to it (its ARQ unbound on the source, a new one bound on
the destination) and the move confirmed (the source's ARQ deleted). At
the end it checks that no ARQ, allocation or mdev is left behind.
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
                 mdev_counter, out=print, break_host=None, repair_host=None):
        """``break_host(hostname)`` makes a host's GPU refuse new vGPUs
        and ``repair_host(hostname)`` undoes it (a hardware fault of a
        simulated host); without them the reschedule and evacuation are
        not shown."""
        self.cyborg = cyborg_url.rstrip('/') + '/v2'
        self.compute = compute_url.rstrip('/')
        self.placement = placement_url.rstrip('/')
        self.count_mdevs = mdev_counter
        self.out = out
        self.break_host = break_host
        self.repair_host = repair_host
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
        self.out('  %-14s %-8s vm=%-8s power=%-2s host=%-28s ARQs: %-22s '
                 'hostdevs: %s'
                 % (step, server['status'], server['OS-EXT-STS:vm_state'],
                    server['OS-EXT-STS:power_state'],
                    server['OS-EXT-SRV-ATTR:hypervisor_hostname'] or '-',
                    arqs or '-', devs or '-'))

    def action(self, uuid, body, status):
        self._call('POST', '%s/servers/%s/action' % (self.compute, uuid),
                   (202,), json=body)
        return self.wait(uuid, status)

    def boot(self, name, profile):
        flavor = dict(FLAVOR, extra_specs={'accel:device_profile': profile})
        uuid = self._call('POST', self.compute + '/servers', (202,), json={
            'server': {'name': name, 'flavor': flavor}})['server']['id']
        return uuid, self.wait(uuid, 'ACTIVE')

    def lifecycle(self, name, profile):
        self.out('%s (device profile %s):' % (name, profile))
        uuid, server = self.boot(name, profile)
        self.last_host = server['OS-EXT-SRV-ATTR:hypervisor_hostname']
        self.out('  on %s; mdevs on the hosts now: %d' % (
            server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
            self.count_mdevs()))
        self.show('boot', server)
        self.show('stop', self.action(uuid, {'os-stop': None}, 'SHUTOFF'))
        self.show('start', self.action(uuid, {'os-start': None}, 'ACTIVE'))
        self.show('hard reboot', self.action(
            uuid, {'reboot': {'type': 'HARD'}}, 'ACTIVE'))
        self.delete(uuid)
        return uuid

    def delete(self, uuid):
        self._call('DELETE', '%s/servers/%s' % (self.compute, uuid),
                   (204, 202))
        self._wait_gone(uuid)
        self.out('  %-14s gone' % 'delete')

    def service(self, host, forced_down):
        """Mark a host's compute service down (or up again), as an
        operator does once a host has failed."""
        (service,) = self._call('GET', self.compute + '/os-services', (200,),
                                headers=ADMIN, params={'host': host})[
                                    'services']
        self._call('PUT', '%s/os-services/%s' % (self.compute, service['id']),
                   (200,), headers=ADMIN, json={'forced_down': forced_down})

    def reschedule_and_evacuate(self, profile):
        """A vGPU guest rescheduled away from a host whose GPU refuses
        new vGPUs, then evacuated back once its new host is down."""
        first = self.last_host
        self.out('vgpu-moved (device profile %s), %s refusing new vGPUs:'
                 % (profile, first))
        self.break_host(first)
        try:
            uuid, server = self.boot('vgpu-moved', profile)
        finally:
            self.repair_host(first)
        tried = [host for host, _node in server['retry']['hosts']]
        self.out('  attempts: %s' % ', '.join(
            '%s (%s)' % (host, 'failed: bind' if n < len(tried) else 'ok')
            for n, host in enumerate(tried, 1)))
        self.show('boot', server)
        source = server['OS-EXT-SRV-ATTR:hypervisor_hostname']
        self.out('  %s marked down; %s repaired' % (source, first))
        self.service(source, forced_down=True)
        try:
            self._call('POST', '%s/servers/%s/action' % (self.compute, uuid),
                       (200,), headers=ADMIN, json={'evacuate': {}})
            self.show('evacuate', self.wait(uuid, 'ACTIVE'))
        finally:
            self.service(source, forced_down=False)
        self.migrate_and_confirm(uuid)
        self.delete(uuid)
        return uuid

    def migrate_and_confirm(self, uuid):
        """Cold-migrate a guest (an admin's action) and confirm it."""
        self._call('POST', '%s/servers/%s/action' % (self.compute, uuid),
                   (202,), headers=ADMIN, json={'migrate': None})
        self.show('migrate', self.wait(uuid, 'VERIFY_RESIZE'))
        self._call('POST', '%s/servers/%s/action' % (self.compute, uuid),
                   (204,), json={'confirmResize': None})
        self.show('confirm', self.wait(uuid, 'ACTIVE'))

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
        if self.break_host is not None:
            uuids.append(self.reschedule_and_evacuate('vgpu-t4'))
        arqs, allocations, mdevs = self.left_behind(uuids)
        self.out('Left behind: %d ARQ(s), %d allocation(s), %d mdev(s)'
                 % (arqs, allocations, mdevs))
        return arqs == allocations == mdevs == 0
