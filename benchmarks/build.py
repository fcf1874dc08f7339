"""How long nova_shim takes to boot an accelerated guest to ACTIVE.

The all-in-one with its compute service (libvirt ``test:///default``):
the time from ``POST /servers`` until the server is ACTIVE, for a guest
with a PCI FPGA (the fake driver) and one with a T4 vGPU, several times
each; the guests are deleted between runs.
"""

import tempfile
import time

import requests

from benchmarks import lifecycle
from cyborg_lite import allinone

USER = {'X-Project-Id': 'bench', 'X-User-Id': 'bench',
        'X-Roles': 'member,reader'}
ADMIN = {'X-Project-Id': 'admin', 'X-Roles': 'admin'}
PROFILES = {'fpga': {'resources:FPGA': '1'},
            'vgpu': {'resources:VGPU': '1'}}


def _boot(compute_url, profile):
    flavor = {'vcpus': 1, 'ram': 512, 'disk': 1,
              'extra_specs': {'accel:device_profile': profile}}
    started = time.perf_counter()
    uuid = requests.post(compute_url + '/servers', headers=USER, json={
        'server': {'name': 'bench', 'flavor': flavor}}).json()['server']['id']
    while True:
        server = requests.get('%s/servers/%s' % (compute_url, uuid),
                              headers=USER).json()['server']
        if server['status'] == 'ACTIVE':
            break
        if server['status'] == 'ERROR':
            raise RuntimeError(server.get('fault'))
        time.sleep(0.005)
    elapsed = time.perf_counter() - started
    requests.delete('%s/servers/%s' % (compute_url, uuid), headers=USER)
    while requests.get('%s/servers/%s' % (compute_url, uuid),
                       headers=USER).status_code != 404:
        time.sleep(0.01)
    return elapsed


def run(runs=10):
    stack = allinone.AllInOne(tempfile.mkdtemp(prefix='cyborg-lite-build-'),
                              host_kinds=['fake', 't4-vgpu'], compute=True,
                              unique_topics=True).start()
    try:
        for name, group in PROFILES.items():
            requests.post(stack.url + '/v2/device_profiles', headers=ADMIN,
                          json=[{'name': name, 'groups': [group]}])
        return {name: lifecycle.summarize(
            [_boot(stack.compute.url, name) for _ in range(runs)])
            for name in PROFILES}
    finally:
        stack.stop()
