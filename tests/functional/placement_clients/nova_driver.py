"""Nova 34's Placement code, unmodified, against a Placement endpoint.

Run with the interpreter of Nova's own virtualenv (``.venv-nova``, made
by ``tools/run-tests.sh``)::

    python nova_driver.py <placement endpoint> <state dir>

It does what Nova's services do with Placement, in their order: the
compute's ``update_from_provider_tree`` for a compute node with traits
the libvirt driver reports and a vGPU child (beside an accelerator child
that Cyborg made), the scheduler's ``get_allocation_candidates`` for a
``RequestSpec`` carrying a device profile's request group, its
``claim_resources`` of the chosen candidate (with ``mappings``), quota's
usage counts, a migration's ``move_allocations`` and back,
``delete_allocation_for_instance`` and, on service delete,
``delete_resource_provider(cascade=True)`` (which reads Nova's own
database, SQLite under the state dir). It prints one JSON document of
what each step saw; the test asserts on it.

Only the standard library, Nova and its dependencies are imported here.
"""

import json
import os
import sys
import uuid

ACCEL_TRAIT = 'CUSTOM_FPGA_INTEL_ARRIA10'
# Traits the libvirt driver reports that a hand-written list lacked.
DRIVER_TRAITS = ['COMPUTE_ADDRESS_SPACE_EMULATED', 'COMPUTE_MEM_BACKING_FILE',
                 'COMPUTE_SECURITY_STATELESS_FIRMWARE',
                 'COMPUTE_STORAGE_VIRTIO_FS', 'COMPUTE_NET_VIF_MODEL_VIRTIO',
                 'HW_CPU_X86_AVX2']


def configure(endpoint, state_dir):
    from nova import config
    from nova import objects
    import nova.conf

    conf = nova.conf.CONF
    config.parse_args([], default_config_files=[], configure_db=False,
                      init_rpc=False)
    for group, name, value in (
            ('placement', 'auth_type', 'none'),
            ('placement', 'endpoint_override', endpoint),
            ('database', 'connection',
             'sqlite:///' + os.path.join(state_dir, 'nova.sqlite')),
            ('api_database', 'connection',
             'sqlite:///' + os.path.join(state_dir, 'nova_api.sqlite'))):
        conf.set_override(name, value, group=group)
    objects.register_all()
    from nova.db.main import api as main_db
    from nova.db import migration
    main_db.configure(conf)
    migration.db_sync(database='main')
    return conf


def cyborg_child(client, ctx, cn_uuid, name):
    """An accelerator child under the compute node, as Cyborg makes it
    (Cyborg's own calls, through the report client's raw methods)."""
    rp_uuid = str(uuid.uuid4())
    version = '1.20'
    resp = client.post('/resource_providers', {
        'uuid': rp_uuid, 'name': name, 'parent_provider_uuid': cn_uuid},
        version=version)
    assert resp.status_code == 200, resp.text
    resp = client.put('/traits/' + ACCEL_TRAIT, None, version='1.6')
    assert resp.status_code in (201, 204), resp.text
    resp = client.put('/resource_providers/%s/inventories' % rp_uuid, {
        'resource_provider_generation': 0,
        'inventories': {'FPGA': {'total': 1, 'max_unit': 1}}},
        version=version)
    assert resp.status_code == 200, resp.text
    gen = resp.json()['resource_provider_generation']
    resp = client.put('/resource_providers/%s/traits' % rp_uuid, {
        'resource_provider_generation': gen,
        'traits': [ACCEL_TRAIT, 'OWNER_CYBORG']}, version=version)
    assert resp.status_code == 200, resp.text
    return rp_uuid


def compute_tree(client, ctx, cn_uuid, hostname):
    """The compute's periodic update: root inventory and traits, and a
    vGPU child of its own."""
    tree = client.get_provider_tree_and_ensure_root(ctx, cn_uuid,
                                                    name=hostname)
    tree.update_inventory(hostname, {
        'VCPU': {'total': 8, 'reserved': 0, 'min_unit': 1, 'max_unit': 8,
                 'step_size': 1, 'allocation_ratio': 4.0},
        'MEMORY_MB': {'total': 16384, 'reserved': 512, 'min_unit': 1,
                      'max_unit': 16384, 'step_size': 1,
                      'allocation_ratio': 1.0},
        'DISK_GB': {'total': 100, 'reserved': 0, 'min_unit': 1,
                    'max_unit': 100, 'step_size': 1,
                    'allocation_ratio': 1.0}})
    tree.update_traits(hostname, DRIVER_TRAITS + ['COMPUTE_ACCELERATORS'])
    pgpu = hostname + '_pci_0000_81_00_0'
    if not tree.exists(pgpu):
        tree.new_child(pgpu, hostname)
    tree.update_inventory(pgpu, {
        'VGPU': {'total': 4, 'reserved': 0, 'min_unit': 1, 'max_unit': 4,
                 'step_size': 1, 'allocation_ratio': 1.0}})
    client.update_from_provider_tree(ctx, tree)
    return pgpu


def request_spec(project_id, user_id, instance_uuid):
    """A RequestSpec for a 2-VCPU flavor with a device profile's group,
    as Nova builds it from Cyborg's ``resources:FPGA`` profile."""
    from nova import objects
    flavor = objects.Flavor(vcpus=2, memory_mb=2048, root_gb=10,
                            ephemeral_gb=0, swap=0, extra_specs={})
    group = objects.RequestGroup(
        requester_id='device_profile_0', resources={'FPGA': 1},
        required_traits={ACCEL_TRAIT}, forbidden_traits=set(),
        use_same_provider=True)
    return objects.RequestSpec(
        flavor=flavor, image=objects.ImageMeta(
            properties=objects.ImageMetaProps()),
        project_id=project_id, user_id=user_id, instance_uuid=instance_uuid,
        requested_resources=[group], is_bfv=False, num_instances=1,
        scheduler_hints={})


def main(endpoint, state_dir):
    configure(endpoint, state_dir)
    from nova import context
    from nova import objects
    from nova.scheduler.client import report
    from nova.scheduler import utils as scheduler_utils

    ctx = context.get_admin_context()
    client = report.SchedulerReportClient()
    seen = {}
    hostname = 'nova-%s.test' % uuid.uuid4().hex[:8]
    cn_uuid = str(uuid.uuid4())

    # nova-compute: the compute node, its traits and children.
    tree = client.get_provider_tree_and_ensure_root(ctx, cn_uuid,
                                                    name=hostname)
    accel = cyborg_child(client, ctx, cn_uuid, hostname + '_fpga_0')
    pgpu = compute_tree(client, ctx, cn_uuid, hostname)
    # A second periodic run with nothing changed.
    compute_tree(client, ctx, cn_uuid, hostname)
    tree = client.get_provider_tree_and_ensure_root(ctx, cn_uuid,
                                                    name=hostname)
    seen['tree'] = {
        'providers': sorted(tree.get_provider_uuids()),
        'root_traits': sorted(client.get_provider_traits(
            ctx, cn_uuid).traits),
        'accel_traits': sorted(client.get_provider_traits(
            ctx, accel).traits),
        'pgpu': tree.data(pgpu).uuid,
        'accel': accel, 'root': cn_uuid}

    # nova-scheduler: candidates for the RequestSpec, and the claim.
    project_id, user_id = uuid.uuid4().hex, uuid.uuid4().hex
    instance_uuid = str(uuid.uuid4())
    spec = request_spec(project_id, user_id, instance_uuid)
    resources = scheduler_utils.ResourceRequest.from_request_spec(spec)
    alloc_reqs, summaries, version = client.get_allocation_candidates(
        ctx, resources)
    mine = [a for a in alloc_reqs if cn_uuid in a['allocations']]
    seen['candidates'] = {'version': version, 'mine': mine,
                          'summary_keys': sorted(summaries.get(
                              accel, {}).get('resources', {}))}
    claimed = scheduler_utils.claim_resources(
        ctx, client, spec, instance_uuid, mine[0],
        allocation_request_version=version)
    seen['claimed'] = claimed
    seen['allocations'] = client.get_allocations_for_consumer(
        ctx, instance_uuid)
    seen['allocs'] = client.get_allocs_for_consumer(ctx, instance_uuid)
    # A second claim for the same consumer fails: it is no longer new.
    try:
        scheduler_utils.claim_resources(
            ctx, client, spec, instance_uuid, mine[0],
            allocation_request_version=version)
        seen['second_claim'] = 'accepted'
    except Exception as exc:  # AllocationUpdateFailed
        seen['second_claim'] = type(exc).__name__
    # The accelerator is now used up: no candidate on this host.
    other = request_spec(project_id, user_id, str(uuid.uuid4()))
    alloc_reqs, _, _ = client.get_allocation_candidates(
        ctx, scheduler_utils.ResourceRequest.from_request_spec(other))
    seen['candidates_after'] = [a for a in alloc_reqs
                                if cn_uuid in a['allocations']]

    # nova-api's quota counts.
    seen['quota'] = client.get_usages_counts_for_quota(ctx, project_id,
                                                       user_id)

    # A migration: the instance's allocations move to the migration
    # consumer, and back.
    migration_uuid = str(uuid.uuid4())
    seen['moved'] = client.move_allocations(ctx, instance_uuid,
                                            migration_uuid)
    seen['after_move'] = {
        'instance': client.get_allocations_for_consumer(ctx, instance_uuid),
        'migration': client.get_allocations_for_consumer(ctx,
                                                         migration_uuid)}
    seen['moved_back'] = client.move_allocations(ctx, migration_uuid,
                                                 instance_uuid)
    seen['after_move_back'] = client.get_allocations_for_consumer(
        ctx, instance_uuid)

    # The instance is deleted.
    seen['deleted'] = client.delete_allocation_for_instance(
        ctx, instance_uuid, force=True)
    seen['after_delete'] = client.get_allocations_for_consumer(
        ctx, instance_uuid)
    seen['quota_after_delete'] = client.get_usages_counts_for_quota(
        ctx, project_id, user_id)

    # The compute service is deleted: its provider tree goes, children
    # first, the accelerator child Cyborg made included. (No instance is
    # left on the node: with SQLAlchemy 2, Nova 34's cascade puts the
    # row holding an instance's uuid, not the uuid, in the allocations
    # URL, so it deletes no instance's allocations on any Placement.)
    compute_node = objects.ComputeNode(
        context=ctx, uuid=cn_uuid, host=hostname,
        hypervisor_hostname=hostname)
    client.delete_resource_provider(ctx, compute_node, cascade=True)
    seen['after_service_delete'] = [
        rp_uuid for rp_uuid in (cn_uuid, accel, seen['tree']['pgpu'])
        if client.get('/resource_providers/' + rp_uuid,
                      version='1.14').status_code != 404]
    json.dump(seen, sys.stdout)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
