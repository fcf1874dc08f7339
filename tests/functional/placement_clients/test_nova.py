"""Nova 34's report client and scheduler utils against Placement.

Nova comes from PyPI into its own virtualenv (``.venv-nova``, made by
``tools/run-tests.sh``; ``CYBORG_LITE_TEST_NOVA_PYTHON`` names another
interpreter); ``.nova_driver`` runs there, unmodified Nova code doing
what nova-compute, nova-scheduler and nova-api do with Placement, and
prints what it saw. Without that virtualenv the test is skipped.
"""

import json
import os
import subprocess

import pytest

DRIVER = os.path.join(os.path.dirname(__file__), 'nova_driver.py')
ACCEL_TRAIT = 'CUSTOM_FPGA_INTEL_ARRIA10'


def nova_python():
    """The interpreter of the Nova virtualenv, or None."""
    path = os.environ.get('CYBORG_LITE_TEST_NOVA_PYTHON') or os.path.join(
        os.path.dirname(__file__), '..', '..', '..', '.venv-nova', 'bin',
        'python')
    if not os.path.exists(path):
        return None
    probe = subprocess.run(
        [path, '-c', 'import nova.scheduler.client.report'],
        capture_output=True)
    return path if probe.returncode == 0 else None


@pytest.fixture(scope='module')
def python():
    path = nova_python()
    if path is None:
        pytest.skip('Nova is not installed (.venv-nova)')
    return path


def run_nova(python, endpoint, state_dir):
    result = subprocess.run([python, DRIVER, endpoint, str(state_dir)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout)


@pytest.mark.slow
def test_nova_schedules_through_placement(python, placement, tmp_path):
    seen = run_nova(python, placement.endpoint, tmp_path)
    tree = seen['tree']
    root, accel, pgpu = tree['root'], tree['accel'], tree['pgpu']

    # update_from_provider_tree: the driver's traits (all of os-traits)
    # and the vGPU child; Cyborg's child untouched.
    assert tree['providers'] == sorted([root, pgpu])
    assert tree['root_traits'] == sorted([
        'COMPUTE_ACCELERATORS', 'COMPUTE_ADDRESS_SPACE_EMULATED',
        'COMPUTE_MEM_BACKING_FILE', 'COMPUTE_NET_VIF_MODEL_VIRTIO',
        'COMPUTE_SECURITY_STATELESS_FIRMWARE', 'COMPUTE_STORAGE_VIRTIO_FS',
        'HW_CPU_X86_AVX2'])
    assert tree['accel_traits'] == [ACCEL_TRAIT, 'OWNER_CYBORG']

    # get_allocation_candidates for the RequestSpec: the device
    # profile's group on the FPGA, the flavor on the root, mapped.
    candidates = seen['candidates']
    assert candidates['version'] == '1.36'
    assert candidates['mine'] == [{
        'allocations': {
            root: {'resources': {'VCPU': 2, 'MEMORY_MB': 2048,
                                 'DISK_GB': 10}},
            accel: {'resources': {'FPGA': 1}}},
        'mappings': {'': [root], 'device_profile_0': [accel]}}]
    assert candidates['summary_keys'] == ['FPGA']

    # claim_resources (PUT /allocations at 1.36 with the mappings).
    assert seen['claimed'] is True
    allocations = seen['allocations']
    assert {rp: a['resources'] for rp, a in allocations.items()} == {
        root: {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 10},
        accel: {'FPGA': 1}}
    assert seen['allocs']['consumer_generation'] == 1
    assert seen['second_claim'] == 'accepted'
    assert seen['candidates_after'] == []
    assert seen['quota'] == {'project': {'cores': 2, 'ram': 2048},
                             'user': {'cores': 2, 'ram': 2048}}

    # move_allocations to the migration and back.
    assert seen['moved'] is True
    assert seen['after_move']['instance'] == {}
    assert {rp: a['resources'] for rp, a in
            seen['after_move']['migration'].items()} == {
        rp: a['resources'] for rp, a in allocations.items()}
    assert seen['moved_back'] is True
    assert {rp: a['resources'] for rp, a in
            seen['after_move_back'].items()} == {
        rp: a['resources'] for rp, a in allocations.items()}

    # delete_allocation_for_instance, then the service delete.
    assert seen['deleted'] is True
    assert seen['after_delete'] == {}
    assert seen['quota_after_delete'] == {'project': {'cores': 0, 'ram': 0},
                                          'user': {'cores': 0, 'ram': 0}}
    assert seen['after_service_delete'] == []
