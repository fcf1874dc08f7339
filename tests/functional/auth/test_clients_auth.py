"""nova_shim's Cyborg client and the conductor's Placement client with
the same identities as ``test_api_auth``, in each strategy."""

import uuid

import pytest

from cyborg_lite import conf as cl_conf
from cyborg_lite.conductor import placement
from nova_shim.accelerator import cyborg
from nova_shim import conf as shim_conf
from nova_shim.context import RequestContext
from nova_shim import exception
from placement_stub import fixture as placement_fixture
from tests.functional.auth import conftest


def nova_client(stack, user, service):
    mode = stack.mode
    overrides, plugin_values = mode.nova_shim_conf(user, service)
    overrides.update({
        ('cyborg', 'endpoint_override'): stack.url + '/v2',
        ('service_user', 'send_service_user_token'):
            service and mode.name != 'http_basic'})
    conf = shim_conf.build_conf(overrides=overrides)
    if plugin_values:
        conftest.register_and_set(conf, 'cyborg', 'http_basic', dict(
            plugin_values, endpoint=stack.url + '/v2'))
    project, roles, _ = conftest.USERS[user]
    ctx = RequestContext(user_id=user, project_id=mode.project(user),
                         roles=roles,
                         **mode.nova_context_extra(user, service))
    return cyborg.get_client(ctx, conf)


def test_nova_shim_lifecycle(stack, profile, fpga):
    # With http_basic, "alice through Nova" is Nova's own user.
    nova = nova_client(stack, 'alice', service=True)
    arqs = nova.create_arqs_and_match_resource_providers(
        profile, {'device_profile_0': [fpga['rp_uuid']]})
    instance = str(uuid.uuid4())
    nova.bind_arqs({a['uuid']: {'hostname': stack.aio.hostnames[0],
                                'device_rp_uuid': a['device_rp_uuid'],
                                'instance_uuid': instance} for a in arqs})
    bound = nova.get_arqs_for_instance(instance, only_resolved=True)
    assert [a['state'] for a in bound] == ['Bound']
    nova.delete_arqs_for_instance(instance)


def test_nova_shim_without_service_token(stack, profile, fpga):
    user_client = nova_client(stack, 'alice', service=False)
    arqs = user_client.create_arqs(profile)
    binding = {a['uuid']: {'hostname': stack.aio.hostnames[0],
                           'device_rp_uuid': fpga['rp_uuid'],
                           'instance_uuid': str(uuid.uuid4())} for a in arqs}
    with pytest.raises(exception.AcceleratorRequestBindingFailed) as exc:
        user_client.bind_arqs(binding)
    assert exc.value.status_code == 403
    other = nova_client(stack, 'bob', service=False)
    with pytest.raises(exception.AcceleratorRequestOpFailed):
        other.get_arq_by_uuid(arqs[0]['uuid'])
    user_client.delete_arqs_by_uuid([a['uuid'] for a in arqs])


@pytest.fixture(scope='module')
def placement_stub(stack):
    mode = stack.mode
    stub = placement_fixture.PlacementFixture(
        overrides=mode.placement_overrides)
    with _started(stub, mode) as running:
        yield running


class _started:
    """Starts the fixture, letting keystone mode register auth_token's
    options on the stub's conf first (they register only on use)."""

    def __init__(self, stub, mode):
        self.stub = stub
        self.mode = mode

    def __enter__(self):
        if self.mode.name == 'keystone':
            original = placement_fixture.conf_lib.build_conf

            def build_conf(overrides=None, **kw):
                conf = original(**kw)
                self.mode.configure_api(conf)
                for (group, name), value in (overrides or {}).items():
                    conf.set_override(name, value, group=group)
                return conf
            placement_fixture.conf_lib.build_conf = build_conf
            try:
                self.stub.start()
            finally:
                placement_fixture.conf_lib.build_conf = original
        else:
            self.stub.start()
        return self.stub

    def __exit__(self, *exc):
        self.stub.stop()


def placement_client(mode, endpoint, user='cyborg'):
    conf = cl_conf.build_conf()
    mode.placement_client(conf, endpoint, user)
    return placement.get_client(conf)


def test_conductor_placement_client(stack, placement_stub):
    client = placement_client(stack.mode, placement_stub.endpoint)
    assert client.get_provider_by_name('no-such-host') is None
    client.ensure_resource_class('CUSTOM_AUTH_TEST')


def test_placement_refuses_members(stack, placement_stub):
    if stack.mode.name == 'noauth':
        pytest.skip('noauth2 trusts the identity headers')
    client = placement_client(stack.mode, placement_stub.endpoint,
                              user='alice')
    with pytest.raises(placement.PlacementError) as exc:
        client.get_provider_by_name('no-such-host')
    assert exc.value.status == 403
