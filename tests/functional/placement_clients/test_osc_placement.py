"""osc-placement (``openstack resource provider ...``, ``allocation
candidate list``, ``resource usage show``) against Placement, as an
operator runs it: the ``openstack`` command of this environment with no
auth and the Placement endpoint."""

import json
import os
import subprocess
import sys
import uuid

import pytest

OSC = os.path.join(os.path.dirname(sys.executable), 'openstack')


class Osc:
    def __init__(self, endpoint):
        self.endpoint = endpoint

    def run(self, *args, version='1.39', ok=True):
        """``openstack <args>``; JSON output when ``-f json`` is asked."""
        cmd = [OSC, '--os-auth-type', 'none', '--os-endpoint', self.endpoint,
               '--os-placement-api-version', version] + list(args)
        result = subprocess.run(cmd, capture_output=True, text=True,
                                timeout=120)
        if not ok:
            assert result.returncode != 0, result.stdout
            return result.stderr
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if '-f' in args else result.stdout


@pytest.fixture
def osc(placement):
    return Osc(placement.endpoint)


def _name(prefix):
    return '%s-%s' % (prefix, uuid.uuid4().hex[:8])


@pytest.mark.slow
def test_providers_tree_inventory_traits(osc):
    root = osc.run('resource', 'provider', 'create', _name('cn'),
                   '-f', 'json')
    assert root['generation'] == 0
    child = osc.run('resource', 'provider', 'create', _name('fpga'),
                    '--parent-provider', root['uuid'], '-f', 'json')
    assert child['root_provider_uuid'] == root['uuid']
    shown = osc.run('resource', 'provider', 'show', child['uuid'],
                    '-f', 'json')
    assert shown['parent_provider_uuid'] == root['uuid']
    tree = osc.run('resource', 'provider', 'list', '--in-tree',
                   root['uuid'], '-f', 'json')
    assert {rp['uuid'] for rp in tree} == {root['uuid'], child['uuid']}
    renamed = _name('cn')
    osc.run('resource', 'provider', 'set', root['uuid'], '--name', renamed,
            '-f', 'json')
    assert osc.run('resource', 'provider', 'list', '--name', renamed,
                   '-f', 'json')[0]['uuid'] == root['uuid']

    invs = osc.run('resource', 'provider', 'inventory', 'set', root['uuid'],
                   '--resource', 'VCPU=8', '--resource',
                   'VCPU:allocation_ratio=4.0', '--resource',
                   'MEMORY_MB=4096', '-f', 'json')
    assert {i['resource_class']: i['total'] for i in invs} == {
        'VCPU': 8, 'MEMORY_MB': 4096}
    # --amend keeps the other classes.
    invs = osc.run('resource', 'provider', 'inventory', 'set', root['uuid'],
                   '--amend', '--resource', 'DISK_GB=100', '-f', 'json')
    assert {i['resource_class'] for i in invs} == {
        'VCPU', 'MEMORY_MB', 'DISK_GB'}
    # One class: "class set" replaces a record the provider has, and
    # refuses one it has not (Placement's PUT of one record).
    err = osc.run('resource', 'provider', 'inventory', 'class', 'set',
                  child['uuid'], 'FPGA', '--total', '2', ok=False)
    assert 'No inventory of class FPGA found' in err
    osc.run('resource', 'provider', 'inventory', 'set', child['uuid'],
            '--amend', '--resource', 'FPGA=2')
    rec = osc.run('resource', 'provider', 'inventory', 'class', 'set',
                  child['uuid'], 'FPGA', '--total', '4', '--max_unit', '2',
                  '-f', 'json')
    assert (rec['total'], rec['max_unit']) == (4, 2)
    shown = osc.run('resource', 'provider', 'inventory', 'show',
                    root['uuid'], 'VCPU', '-f', 'json')
    assert shown['allocation_ratio'] == 4.0

    trait = 'CUSTOM_' + uuid.uuid4().hex[:8].upper()
    osc.run('trait', 'create', trait)
    traits = osc.run('resource', 'provider', 'trait', 'set', child['uuid'],
                     '--trait', trait, '--trait', 'HW_CPU_X86_AVX2',
                     '-f', 'json')
    assert {t['name'] for t in traits} == {trait, 'HW_CPU_X86_AVX2'}
    # A standard trait of today's os-traits.
    traits = osc.run('resource', 'provider', 'trait', 'set', root['uuid'],
                     '--trait', 'COMPUTE_STORAGE_VIRTIO_FS', '--trait',
                     'COMPUTE_ACCELERATORS', '-f', 'json')
    assert {t['name'] for t in traits} == {'COMPUTE_STORAGE_VIRTIO_FS',
                                           'COMPUTE_ACCELERATORS'}

    osc.run('resource', 'provider', 'delete', root['uuid'], ok=False)
    osc.run('resource', 'provider', 'delete', child['uuid'])
    osc.run('resource', 'provider', 'delete', root['uuid'])


@pytest.mark.slow
def test_allocations_candidates_usages(osc):
    root = osc.run('resource', 'provider', 'create', _name('cn'),
                   '-f', 'json')['uuid']
    osc.run('resource', 'provider', 'inventory', 'set', root,
            '--resource', 'VCPU=4', '--resource', 'MEMORY_MB=2048')
    trait = 'CUSTOM_' + uuid.uuid4().hex[:8].upper()
    osc.run('trait', 'create', trait)
    fpga = osc.run('resource', 'provider', 'create', _name('fpga'),
                   '--parent-provider', root, '-f', 'json')['uuid']
    osc.run('resource', 'provider', 'inventory', 'set', fpga,
            '--resource', 'FPGA=1')
    osc.run('resource', 'provider', 'trait', 'set', fpga, '--trait', trait)

    rows = osc.run(
        'allocation', 'candidate', 'list', '--resource', 'VCPU=1',
        '--group', '1', '--resource', 'FPGA=1', '--required', trait,
        '--group-policy', 'none', '-f', 'json')
    # One candidate, one row per provider in it.
    assert {row['#'] for row in rows} == {1}
    assert {row['resource provider']: row['allocation'] for row in rows} == {
        root: 'VCPU=1', fpga: 'FPGA=1'}

    consumer, project, user = (str(uuid.uuid4()) for _ in range(3))
    allocs = osc.run('resource', 'provider', 'allocation', 'set', consumer,
                     '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=512' % root,
                     '--allocation', 'rp=%s,FPGA=1' % fpga,
                     '--project-id', project, '--user-id', user,
                     '--consumer-type', 'INSTANCE', '-f', 'json')
    assert {a['resource_provider']: a['resources'] for a in allocs} == {
        root: {'VCPU': 2, 'MEMORY_MB': 512}, fpga: {'FPGA': 1}}
    # Exceeding capacity is refused (409) and changes nothing.
    err = osc.run('resource', 'provider', 'allocation', 'set', consumer,
                  '--allocation', 'rp=%s,VCPU=99' % root,
                  '--project-id', project, '--user-id', user,
                  '--consumer-type', 'INSTANCE', ok=False)
    assert '409' in err or 'capacity' in err
    shown = osc.run('resource', 'provider', 'allocation', 'show', consumer,
                    '-f', 'json')
    assert {a['resource_provider'] for a in shown} == {root, fpga}

    usage = osc.run('resource', 'provider', 'usage', 'show', root,
                    '-f', 'json')
    assert {u['resource_class']: u['usage'] for u in usage} == {
        'VCPU': 2, 'MEMORY_MB': 512}
    usage = osc.run('resource', 'usage', 'show', project, '-f', 'json',
                    version='1.37')
    assert {u['resource_class']: u['usage'] for u in usage} == {
        'VCPU': 2, 'MEMORY_MB': 512, 'FPGA': 1}
    usage = osc.run('resource', 'usage', 'show', project, '--user-id', user,
                    '-f', 'json', version='1.37')
    assert {u['resource_class']: u['usage'] for u in usage} == {
        'VCPU': 2, 'MEMORY_MB': 512, 'FPGA': 1}
    # From 1.38, by consumer type, with the count of consumers.
    usage = osc.run('resource', 'usage', 'show', project, '-f', 'json')
    assert usage == [{'resource_class': 'INSTANCE', 'usage': {
        'VCPU': 2, 'MEMORY_MB': 512, 'FPGA': 1, 'consumer_count': 1}}]

    # No room left for the FPGA: no candidate.
    assert osc.run('allocation', 'candidate', 'list', '--resource',
                   'VCPU=1', '--group', '1', '--resource', 'FPGA=1',
                   '--group-policy', 'none', '--required', trait,
                   '-f', 'json') == []
    osc.run('resource', 'provider', 'allocation', 'unset', consumer,
            '--provider', fpga, '-f', 'json')
    shown = osc.run('resource', 'provider', 'allocation', 'show', consumer,
                    '-f', 'json')
    assert {a['resource_provider'] for a in shown} == {root}
    osc.run('resource', 'provider', 'allocation', 'delete', consumer)
    assert osc.run('resource', 'provider', 'allocation', 'show', consumer,
                   '-f', 'json') == []
    osc.run('resource', 'provider', 'delete', fpga)
    osc.run('resource', 'provider', 'delete', root)
