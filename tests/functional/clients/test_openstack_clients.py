"""Real clients against the live all-in-one API: the ``openstack
accelerator ...`` CLI and openstacksdk's ``conn.accelerator``.

python-openstackclient 10.4+ ships its own accelerator commands; 10.3.1
and older load python-cyborgclient's plugin instead. The CLI tests run
with the ``openstack`` of this environment and, when
``CYBORG_LITE_TEST_LEGACY_OSC`` names one (``tools/run-tests.sh`` builds
it), with a python-cyborgclient one too.
"""

import json
import os
import subprocess
import sys
import uuid

import openstack
import pytest

from tests.fixtures import cyborg_api

OSC = os.path.join(os.path.dirname(sys.executable), 'openstack')
LEGACY_OSC = os.environ.get('CYBORG_LITE_TEST_LEGACY_OSC')
CLIS = [pytest.param(OSC, id='osc')] + [
    pytest.param(LEGACY_OSC, id='cyborgclient-plugin',
                 marks=pytest.mark.skipif(
                     not LEGACY_OSC, reason='CYBORG_LITE_TEST_LEGACY_OSC '
                                            'is not set'))]


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('clients')) as s:
        yield s


def _osc(binary, stack, *args):
    cmd = [binary, '--os-auth-type', 'none',
           '--os-endpoint', stack.url + '/v2',
           '--os-accelerator-api-version', '2.3',
           'accelerator'] + list(args)
    result = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if '-f' in args else result.stdout


@pytest.mark.parametrize('binary', CLIS)
def test_device_profile_commands(stack, binary):
    name = 'cli-dp-' + uuid.uuid4().hex[:6]
    created = _osc(binary, stack, 'device', 'profile', 'create', name,
                   '[{"resources:FPGA": "1"}]', '-f', 'json')
    assert created['name'] == name
    listed = _osc(binary, stack, 'device', 'profile', 'list', '-f', 'json')
    assert name in [dp['name'] for dp in listed]
    shown = _osc(binary, stack, 'device', 'profile', 'show', name,
                 '-f', 'json')
    assert shown['uuid'] == created['uuid']
    _osc(binary, stack, 'device', 'profile', 'delete', created['uuid'])
    listed = _osc(binary, stack, 'device', 'profile', 'list', '-f', 'json')
    assert name not in [dp['name'] for dp in listed]


@pytest.mark.parametrize('binary', CLIS)
def test_arq_and_deployable_commands(stack, binary):
    name = 'cli-arq-' + uuid.uuid4().hex[:6]
    _osc(binary, stack, 'device', 'profile', 'create', name,
         '[{"resources:FPGA": "1"}]')
    arq = _osc(binary, stack, 'arq', 'create', name, '-f', 'json')
    assert arq['state'] == 'Initial'
    listed = _osc(binary, stack, 'arq', 'list', '-f', 'json')
    assert arq['uuid'] in [a['uuid'] for a in listed]
    shown = _osc(binary, stack, 'arq', 'show', arq['uuid'], '-f', 'json')
    assert shown['device_profile_name'] == name
    _osc(binary, stack, 'arq', 'delete', arq['uuid'])
    listed = _osc(binary, stack, 'arq', 'list', '-f', 'json')
    assert arq['uuid'] not in [a['uuid'] for a in listed]
    deployables = _osc(binary, stack, 'deployable', 'list', '-f', 'json')
    assert {d['name'] for d in deployables} == {
        d['name'] for d in stack.client().get('/deployables').json()[
            'deployables']}
    _osc(binary, stack, 'device', 'profile', 'delete', name)


@pytest.fixture
def conn(stack):
    return openstack.connection.Connection(
        auth_type='none', accelerator_endpoint_override=stack.url + '/v2',
        accelerator_api_version='2', accelerator_default_microversion='2.3')


def test_openstacksdk(stack, conn):
    name = 'sdk-dp-' + uuid.uuid4().hex[:6]
    dp = conn.accelerator.create_device_profile(
        name=name, groups=[{'resources:FPGA': '1'}])
    assert dp.name == name
    assert name in [p.name for p in conn.accelerator.device_profiles()]
    assert conn.accelerator.get_device_profile(dp.uuid).name == name
    arq = conn.accelerator.create_accelerator_request(
        device_profile_name=name)
    assert arq.state == 'Initial'
    assert arq.uuid in [a.uuid for a in
                        conn.accelerator.accelerator_requests()]
    fetched = conn.accelerator.get_accelerator_request(arq.uuid)
    assert fetched.device_profile_name == name
    deployables = list(conn.accelerator.deployables())
    assert len(deployables) == 2
    assert conn.accelerator.get_deployable(deployables[0].id).name == \
        deployables[0].name
    devices = list(conn.accelerator.devices())
    assert {d.type for d in devices} == {'FPGA', 'GPU'}
    conn.accelerator.delete_accelerator_request(arq.uuid,
                                                ignore_missing=False)
    assert arq.uuid not in [a.uuid for a in
                            conn.accelerator.accelerator_requests()]
    conn.accelerator.delete_device_profile(dp.uuid, ignore_missing=False)
    assert name not in [p.name for p in conn.accelerator.device_profiles()]


def test_openstacksdk_errors_are_readable(conn):
    with pytest.raises(openstack.exceptions.NotFoundException) as info:
        conn.accelerator.get_accelerator_request(str(uuid.uuid4()))
    assert 'could not be found' in str(info.value)


def _fpga_deployable_id(stack):
    """The integer id of the FPGA deployable (the API names deployables
    by uuid; only attributes show their ids)."""
    return next(a['deployable_id'] for a in stack.client().get(
        '/attributes', params={'key': 'rc'}).json()['attributes']
        if a['value'] == 'FPGA')


@pytest.mark.parametrize('binary', CLIS)
def test_attribute_commands(stack, binary):
    """Both CLIs send the attribute wrapped in its resource key."""
    deployable_id = _fpga_deployable_id(stack)
    key = 'cli_key_' + uuid.uuid4().hex[:6]
    created = _osc(binary, stack, 'device', 'attribute', 'create',
                   str(deployable_id), key, 'v1', '-f', 'json')
    assert (created['key'], created['value']) == (key, 'v1')
    shown = _osc(binary, stack, 'device', 'attribute', 'show',
                 created['uuid'], '-f', 'json')
    assert shown['deployable_id'] == deployable_id
    listed = _osc(binary, stack, 'device', 'attribute', 'list', '-f', 'json')
    assert created['uuid'] in [a['uuid'] for a in listed]
    _osc(binary, stack, 'device', 'attribute', 'delete', created['uuid'])
    listed = _osc(binary, stack, 'device', 'attribute', 'list', '-f', 'json')
    assert created['uuid'] not in [a['uuid'] for a in listed]


def test_openstacksdk_attributes(stack, conn):
    deployable_id = _fpga_deployable_id(stack)
    key = 'sdk_key_' + uuid.uuid4().hex[:6]
    attr = conn.accelerator.create_attribute(
        deployable_id=deployable_id, key=key, value='v1')
    assert (attr.key, attr.value, attr.deployable_id) == (
        key, 'v1', deployable_id)
    assert conn.accelerator.get_attribute(attr.uuid).key == key
    assert attr.uuid in [a.uuid for a in conn.accelerator.attributes()]
    conn.accelerator.delete_attribute(attr.uuid, ignore_missing=False)
    assert attr.uuid not in [a.uuid for a in conn.accelerator.attributes()]
