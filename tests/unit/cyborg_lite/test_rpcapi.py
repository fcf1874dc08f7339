"""The RPC clients and servers stay in step: every client call has a
server method with the same arguments, and versions match."""

import inspect

import pytest

from cyborg_lite.agent import manager as agent_manager
from cyborg_lite.agent import rpcapi as agent_rpcapi
from cyborg_lite.conductor import manager as conductor_manager
from cyborg_lite.conductor import rpcapi as conductor_rpcapi

PAIRS = [
    (conductor_rpcapi.ConductorAPI, conductor_manager.ConductorManager,
     conductor_rpcapi.RPC_API_VERSION),
    (agent_rpcapi.AgentAPI, agent_manager.AgentManager,
     agent_rpcapi.RPC_API_VERSION),
]


def _original(fn):
    """The function under oslo.messaging's expected_exceptions wrapper,
    which does not keep the wrapped signature."""
    for cell in fn.__closure__ or ():
        inner = cell.cell_contents
        if inspect.isfunction(inner):
            return _original(inner)
    return fn


def _public(cls):
    return {name: fn for name, fn in inspect.getmembers(cls,
                                                        inspect.isfunction)
            if not name.startswith('_')}


@pytest.mark.parametrize('client, server, version', PAIRS)
def test_versions_in_sync(client, server, version):
    assert server.target.version == version


def test_each_call_names_a_version_the_conductor_serves():
    """A call that asks for a version above the server's is refused at
    run time (UnsupportedVersion): every version a call names is one
    the conductor serves, for a method it has; the API's version is
    pinned here, so that changing it is a decision."""
    from oslo_utils import versionutils
    assert conductor_rpcapi.RPC_API_VERSION == '1.4'
    served = conductor_manager.ConductorManager.target.version
    methods = set(_public(conductor_manager.ConductorManager))
    for method, version in conductor_rpcapi.VERSIONS.items():
        assert method in methods, method
        assert versionutils.is_compatible(version, served), (
            method, version, served)


@pytest.mark.parametrize('client, server, version', PAIRS)
def test_methods_in_sync(client, server, version):
    client_methods = _public(client)
    server_methods = _public(server)
    assert set(client_methods) == set(server_methods)
    for name, fn in client_methods.items():
        client_args = list(inspect.signature(fn).parameters)[1:]
        server_args = list(inspect.signature(_original(server_methods[name]))
                           .parameters)[1:]
        if client is agent_rpcapi.AgentAPI:
            # The client names the host (the server is that host) and
            # sends an admin context itself.
            client_args, server_args = client_args[1:], server_args[1:]
        assert client_args == server_args, name


def test_only_quick_calls_are_quick():
    assert conductor_rpcapi.quick('arq_get', {'uuid': 'u'})
    assert conductor_rpcapi.quick('arq_list', {'instance_uuid': 'i'})
    assert not conductor_rpcapi.quick('arq_list', {})
    assert not conductor_rpcapi.quick('device_list', {})
    assert not conductor_rpcapi.quick('arq_bind', {'bindings': {}})
    # Not repeated after a loss: their messages must expire with it.
    assert conductor_rpcapi.quick('device_profile_create', {'profile': {}})
    assert conductor_rpcapi.quick('attribute_delete', {'uuid': 'u'})
    assert not conductor_rpcapi.quick('deployable_program', {})
    assert not conductor_rpcapi.quick('call_batch', {'calls': [
        {'method': 'arq_get', 'kwargs': {}},
        {'method': 'arq_delete', 'kwargs': {}}]})
