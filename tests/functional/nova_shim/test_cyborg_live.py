"""nova_shim's Cyborg client and libvirt driver against the real stack.

The cyborg-lite all-in-one (API, conductor, fake-driver agent) runs in
process; nova_shim talks to it as Nova would, over the noauth API.
"""

import uuid

import pytest

cyborg_api = pytest.importorskip('tests.fixtures.cyborg_api')

from nova_shim.accelerator import cyborg  # noqa: E402
from nova_shim import conf as shim_conf  # noqa: E402
from nova_shim.context import RequestContext  # noqa: E402
from nova_shim import exception  # noqa: E402

DP_NAME = 'nova-shim-fpga'
CTX = RequestContext(user_id='u-nova', project_id='p-nova',
                     roles=['member', 'reader'])


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack')) as s:
        resp = s.client(cyborg_api.ADMIN).post('/device_profiles', json=[
            {'name': DP_NAME, 'groups': [{'resources:FPGA': '1'}]}])
        assert resp.status_code == 201, resp.text
        yield s


def client(stack, service_token=True):
    conf = shim_conf.build_conf(overrides={
        ('cyborg', 'auth_type'): 'none',
        ('cyborg', 'endpoint_override'): stack.url + '/v2',
        ('service_user', 'send_service_user_token'): service_token})
    return cyborg.get_client(CTX, conf)


def test_create_bind_get_delete(stack):
    nova = client(stack)
    groups = nova.get_device_request_groups(
        nova.get_device_profile_groups(DP_NAME))
    assert [(g.requester_id, g.resources) for g in groups] == [
        ('device_profile_0', {'FPGA': 1})]
    rp_uuid = stack.deployable('FPGA')['rp_uuid']
    arqs = nova.create_arqs_and_match_resource_providers(
        DP_NAME, {'device_profile_0': [rp_uuid]})
    instance = str(uuid.uuid4())
    nova.bind_arqs({arq['uuid']: {'hostname': stack.aio.hostnames[0],
                                  'device_rp_uuid': arq['device_rp_uuid'],
                                  'instance_uuid': instance}
                    for arq in arqs})
    bound = nova.get_arqs_for_instance(instance, only_resolved=True)
    assert [arq['state'] for arq in bound] == ['Bound']
    assert bound[0]['attach_handle_info']
    nova.delete_arqs_for_instance(instance)
    with pytest.raises(exception.AcceleratorRequestOpFailed):
        nova.get_arqs_for_instance(instance)


def test_errors_from_the_real_api(stack):
    nova = client(stack)
    with pytest.raises(exception.AcceleratorRequestOpFailed) as info:
        nova.create_arqs('no-such-profile')
    assert info.value.status_code == 404
    assert 'no-such-profile' in str(info.value)
    with pytest.raises(exception.AcceleratorRequestOpFailed) as info:
        nova.get_arq_by_uuid(str(uuid.uuid4()))
    assert info.value.status_code == 404
    with pytest.raises(exception.DeviceProfileError, match='got 0'):
        nova.get_device_profile_groups('no-such-profile')


def test_bind_without_service_token_is_refused(stack):
    nova = client(stack, service_token=False)
    rp_uuid = stack.deployable('FPGA')['rp_uuid']
    arqs = nova.create_arqs(DP_NAME)
    with pytest.raises(exception.AcceleratorRequestBindingFailed) as info:
        nova.bind_arqs({arqs[0]['uuid']: {
            'hostname': stack.aio.hostnames[0], 'device_rp_uuid': rp_uuid,
            'instance_uuid': str(uuid.uuid4())}})
    assert info.value.status_code == 403
    assert info.value.arqs == [arqs[0]['uuid']]
    assert 'service token' in str(info.value)
    nova.delete_arqs_by_uuid([arqs[0]['uuid']])


def test_bound_arqs_become_hostdevs(stack):
    pytest.importorskip('libvirt')
    from nova_shim.virt import libvirt as virt

    nova = client(stack)
    rp_uuid = stack.deployable('FPGA')['rp_uuid']
    arqs = nova.create_arqs_and_match_resource_providers(
        DP_NAME, {'device_profile_0': [rp_uuid]})
    guest = virt.GuestSpec(uuid=str(uuid.uuid4()), vcpus=1, memory_mb=128)
    nova.bind_arqs({arq['uuid']: {'hostname': stack.aio.hostnames[0],
                                  'device_rp_uuid': rp_uuid,
                                  'instance_uuid': guest.uuid}
                    for arq in arqs})
    bound = nova.get_arqs_for_instance(guest.uuid, only_resolved=True)
    driver = virt.LibvirtDriver(shim_conf.build_conf())
    driver.init_host()
    try:
        driver.spawn(guest, bound)
        assert driver.list_hostdevs(guest.uuid) == [
            virt.hostdev_for_arq(arq) for arq in bound]
        driver.destroy(guest.uuid)
    finally:
        driver.cleanup_host()
    nova.delete_arqs_for_instance(guest.uuid)
