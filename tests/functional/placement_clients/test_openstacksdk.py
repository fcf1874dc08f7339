"""openstacksdk's ``conn.placement`` against Placement: providers,
nested trees, inventories created and set, traits, aggregates,
allocations, candidates and usages, as an SDK user calls them."""

import uuid

import openstack
from openstack import exceptions as sdk_exc
import pytest


@pytest.fixture
def conn(placement):
    return openstack.connection.Connection(
        auth_type='none', placement_endpoint_override=placement.endpoint,
        placement_api_version='1')


def _name(prefix):
    return '%s-%s' % (prefix, uuid.uuid4().hex[:8])


def test_provider_tree_inventories_traits(conn):
    p = conn.placement
    root = p.create_resource_provider(name=_name('cn'))
    child = p.create_resource_provider(name=_name('gpu'),
                                       parent_provider_uuid=root.id)
    assert p.get_resource_provider(child.id).root_provider_id == root.id
    assert {rp.id for rp in p.resource_providers(in_tree=root.id)} == {
        root.id, child.id}
    assert [rp.id for rp in p.resource_providers(name=root.name)] == [
        root.id]
    renamed = p.update_resource_provider(root, name=_name('cn'))
    assert p.get_resource_provider(root.id).name == renamed.name

    # POST .../inventories creates one record.
    inv = p.create_resource_provider_inventory(
        child.id, 'VGPU', total=8, max_unit=2)
    assert (inv.total, inv.max_unit) == (8, 2)
    inv = p.get_resource_provider_inventory('VGPU', child.id)
    inv = p.update_resource_provider_inventory(
        inv, child.id, resource_provider_generation=p.get_resource_provider(
            child.id).generation, total=16)
    assert p.get_resource_provider_inventory('VGPU', child.id).total == 16
    # A second create of the same class is a conflict.
    with pytest.raises(sdk_exc.ConflictException):
        p.create_resource_provider_inventory(child.id, 'VGPU', total=1)
    # PUT .../inventories replaces them all.
    root = p.get_resource_provider(root.id)
    p.set_resource_provider_inventories(root, {
        'VCPU': {'total': 16, 'allocation_ratio': 2.0},
        'MEMORY_MB': {'total': 4096}}, root.generation)
    assert {i.resource_class: i.total for i in
            p.resource_provider_inventories(root.id)} == {
        'VCPU': 16, 'MEMORY_MB': 4096}

    trait = 'CUSTOM_' + uuid.uuid4().hex[:8].upper()
    p.create_trait(trait)
    assert trait in [t.name for t in p.traits(name='startswith:CUSTOM_')]
    p.set_resource_provider_trait(p.get_resource_provider_trait(child.id),
                                  traits=[trait, 'COMPUTE_ACCELERATORS'])
    assert sorted(p.get_resource_provider_trait(child.id).traits) == sorted(
        [trait, 'COMPUTE_ACCELERATORS'])

    agg = str(uuid.uuid4())
    p.set_resource_provider_aggregates(p.get_resource_provider(root.id), agg)
    assert p.get_resource_provider_aggregates(root.id).aggregates == [agg]

    p.delete_resource_provider_inventory('VGPU', child.id)
    assert [i.resource_class for i in
            p.resource_provider_inventories(child.id)] == []
    with pytest.raises(sdk_exc.ConflictException):
        p.delete_resource_provider(root.id)
    p.delete_resource_provider(child.id)
    p.delete_resource_provider(root.id)
    with pytest.raises(sdk_exc.NotFoundException):
        p.get_resource_provider(root.id)


def test_allocations_candidates_usages(conn):
    p = conn.placement
    root = p.create_resource_provider(name=_name('cn'))
    p.set_resource_provider_inventories(root, {
        'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 2048}}, root.generation)
    gpu = p.create_resource_provider(name=_name('gpu'),
                                     parent_provider_uuid=root.id)
    p.create_resource_provider_inventory(gpu.id, 'VGPU', total=2)

    found = list(p.allocation_candidates(
        resources='VCPU:1', resources_GPU='VGPU:1', group_policy='none',
        in_tree=root.id))
    assert len(found) == 1
    assert found[0].mappings == {'': [root.id], '_GPU': [gpu.id]}
    assert found[0].allocations == {
        root.id: {'resources': {'VCPU': 1}},
        gpu.id: {'resources': {'VGPU': 1}}}

    consumer, project, user = (str(uuid.uuid4()) for _ in range(3))
    p.update_allocation(
        consumer, allocations=found[0].allocations, project_id=project,
        user_id=user, consumer_generation=None, consumer_type='INSTANCE')
    alloc = p.get_allocation(consumer)
    assert alloc.consumer_generation == 1
    assert alloc.consumer_type == 'INSTANCE'
    assert alloc.allocations[gpu.id]['resources'] == {'VGPU': 1}

    # Two consumers at once (POST /allocations).
    other = str(uuid.uuid4())
    p.create_allocations({
        consumer: {'allocations': {root.id: {'resources': {'VCPU': 2}}},
                   'project_id': project, 'user_id': user,
                   'consumer_generation': 1, 'consumer_type': 'INSTANCE'},
        other: {'allocations': {gpu.id: {'resources': {'VGPU': 2}}},
                'project_id': project, 'user_id': user,
                'consumer_generation': None, 'consumer_type': 'MIGRATION'}})
    assert p.get_allocation(consumer).allocations == {
        root.id: {'resources': {'VCPU': 2},
                  'generation': p.get_resource_provider(root.id).generation}}
    # Over capacity: refused as a conflict.
    with pytest.raises(sdk_exc.ConflictException):
        p.update_allocation(
            str(uuid.uuid4()),
            allocations={gpu.id: {'resources': {'VGPU': 1}}},
            project_id=project, user_id=user, consumer_generation=None,
            consumer_type='INSTANCE')

    usages = {u.consumer_type: (u.resources, u.consumer_count)
              for u in p.usages(project_id=project)}
    assert usages == {'INSTANCE': ({'VCPU': 2}, 1),
                      'MIGRATION': ({'VGPU': 2}, 1)}
    rp_usages = p.fetch_resource_provider_usages(root.id)
    assert rp_usages.usages == {'VCPU': 2, 'MEMORY_MB': 0}

    p.delete_allocation(consumer)
    p.delete_allocation(other)
    with pytest.raises(sdk_exc.NotFoundException):
        p.delete_allocation(consumer, ignore_missing=False)
    p.delete_resource_provider(gpu.id)
    p.delete_resource_provider(root.id)
