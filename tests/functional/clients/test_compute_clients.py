"""Nova's real clients boot accelerated guests through the all-in-one.

The all-in-one (its compute API, Placement, cyborg-lite, the Image API,
on free loopback ports) writes ``clouds.yaml`` with its one cloud,
``cyborg-lite``; the clients use it as any cloud, unchanged:

* the ``openstack`` CLI of this environment (python-openstackclient
  10.5, with its own accelerator commands) and, when
  ``CYBORG_LITE_TEST_LEGACY_OSC`` names one, python-cyborgclient's
  ``openstack accelerator`` plugin: a device profile, a flavor whose
  ``accel:device_profile`` names it, ``server create --image --nic none
  --wait``, show, stop, start, ``reboot --hard``, ``delete --wait``, the
  ARQs Bound while the server lives and gone after;
* openstacksdk's ``conn.compute`` (create, wait, delete) and
  ``conn.accelerator``;
* beyond Nova, ``openstack server resize [--wait]``, ``server resize
  revert``, ``server migration list`` and openstacksdk's
  ``resize_server`` and
  ``confirm_server_resize`` moving an accelerated guest to another
  host's device;
* python-novaclient over a keystoneauth session of the same cloud.
"""

import json
import os
import subprocess
import sys
import time
import uuid

import openstack
import openstack.config
import openstack.connection
import pytest
import yaml

from cyborg_lite import allinone
from cyborg_lite.allinone import clouds
from cyborg_lite.allinone import images

OSC = os.path.join(os.path.dirname(sys.executable), 'openstack')
LEGACY_OSC = os.environ.get('CYBORG_LITE_TEST_LEGACY_OSC')
IMAGE = next(iter(images.SEEDED))


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    state = tmp_path_factory.mktemp('cloud')
    stack = allinone.AllInOne(
        str(state), host_kinds=['t4-vgpu', 'fake'], compute=True,
        unique_topics=True)
    with stack:
        stack.clouds_yaml = stack.write_clouds_yaml()
        profile = 'vgpu-' + uuid.uuid4().hex[:6]
        osc(stack, 'accelerator', 'device', 'profile', 'create', profile,
            '[{"resources:VGPU": "1"}]')
        stack.profile = profile
        stack.flavor = 'vgpu-' + uuid.uuid4().hex[:6]
        osc(stack, 'flavor', 'create', '--vcpus', '1', '--ram', '256',
            '--disk', '1', '--property', 'accel:device_profile=' + profile,
            stack.flavor)
        yield stack


def osc(stack, *args, binary=OSC):
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=stack.clouds_yaml)
    result = subprocess.run(
        [binary, '--os-cloud', clouds.CLOUD] + list(args) + (
            ['-f', 'json'] if {'show', 'list', 'create'} & set(args[:4])
            else []),
        capture_output=True, text=True, timeout=180, env=env)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    try:
        return json.loads(result.stdout)
    except ValueError:
        return result.stdout


def sdk(stack):
    """An openstacksdk connection to the cloud of the stack's
    clouds.yaml."""
    config = openstack.config.OpenStackConfig(
        config_files=[stack.clouds_yaml])
    return openstack.connection.Connection(
        config=config.get_one(clouds.CLOUD))


def arqs_of(stack, server_id, binary=OSC):
    return [a for a in osc(stack, 'accelerator', 'arq', 'list',
                           binary=binary)
            if a['instance_uuid'] == server_id]


def test_the_cloud_names_every_service(cloud):
    with open(cloud.clouds_yaml) as f:
        config = yaml.safe_load(f)['clouds'][clouds.CLOUD]
    assert config['auth_type'] == 'none'
    assert config['compute_endpoint_override'] == cloud.compute.url
    assert config['accelerator_endpoint_override'] == cloud.url + '/v2'
    assert config['image_endpoint_override'] == cloud.images.url


def test_openstack_cli_boots_an_accelerated_guest(cloud):
    name = 'osc-' + uuid.uuid4().hex[:6]
    created = osc(cloud, 'server', 'create', '--flavor', cloud.flavor,
                  '--image', IMAGE, '--nic', 'none', '--wait', name)
    assert created['status'] == 'ACTIVE', created
    shown = osc(cloud, 'server', 'show', name)
    assert shown['status'] == 'ACTIVE'
    # OSC shows the image as "name (id)".
    assert images.seeded_id(IMAGE) in shown['image'], shown['image']
    server_id = shown['id']
    [arq] = arqs_of(cloud, server_id)
    assert (arq['state'], arq['attach_handle_type']) == ('Bound', 'MDEV')
    if LEGACY_OSC:
        [legacy] = arqs_of(cloud, server_id, binary=LEGACY_OSC)
        assert legacy['state'] == 'Bound'
    # The compute API answers stop and start once done; OSC waits for
    # a reboot.
    for action, status in ((['stop'], 'SHUTOFF'), (['start'], 'ACTIVE'),
                           (['reboot', '--hard', '--wait'], 'ACTIVE')):
        osc(cloud, 'server', *action, name)
        assert osc(cloud, 'server', 'show', name)['status'] == status
    assert [a['state'] for a in arqs_of(cloud, server_id)] == ['Bound']
    osc(cloud, 'server', 'delete', '--wait', name)
    assert name not in [s['Name'] for s in osc(cloud, 'server', 'list')]
    assert arqs_of(cloud, server_id) == []


def test_openstack_cli_and_sdk_resize_an_accelerated_guest(cloud):
    """Beyond Nova: a vGPU guest resized to an FPGA flavor (the other
    host), reverted, resized again and confirmed."""
    fpga_profile = 'fpga-' + uuid.uuid4().hex[:6]
    osc(cloud, 'accelerator', 'device', 'profile', 'create', fpga_profile,
        '[{"resources:FPGA": "1"}]')
    fpga_flavor = 'fpga-' + uuid.uuid4().hex[:6]
    osc(cloud, 'flavor', 'create', '--vcpus', '1', '--ram', '256',
        '--disk', '1', '--property', 'accel:device_profile=' + fpga_profile,
        fpga_flavor)
    name = 'resized-' + uuid.uuid4().hex[:6]
    server_id = osc(cloud, 'server', 'create', '--flavor', cloud.flavor,
                    '--image', IMAGE, '--nic', 'none', '--wait',
                    name)['id']
    [vgpu_arq] = arqs_of(cloud, server_id)
    osc(cloud, 'server', 'resize', '--flavor', fpga_flavor, '--wait', name)
    shown = osc(cloud, 'server', 'show', name)
    assert shown['status'] == 'VERIFY_RESIZE', shown
    [fpga_arq] = arqs_of(cloud, server_id)
    assert fpga_arq['attach_handle_type'] == 'PCI'
    osc(cloud, 'server', 'resize', 'revert', name)
    conn = sdk(cloud)
    server = conn.compute.wait_for_server(
        conn.compute.get_server(server_id), wait=120)
    assert server.status == 'ACTIVE'
    [back] = arqs_of(cloud, server_id)
    assert (back['uuid'], back['state'], back['attach_handle_type']) == \
        (vgpu_arq['uuid'], 'Bound', 'MDEV')
    # openstacksdk: resize again, and confirm.
    flavor = conn.compute.find_flavor(fpga_flavor, ignore_missing=False)
    conn.compute.resize_server(server, flavor.id)
    server = conn.compute.wait_for_server(server, status='VERIFY_RESIZE',
                                          wait=120)
    conn.compute.confirm_server_resize(server)
    server = conn.compute.wait_for_server(server, wait=120)
    assert [(a['state'], a['attach_handle_type'])
            for a in arqs_of(cloud, server_id)] == [('Bound', 'PCI')]
    # OSC lists the moves: the reverted resize and the confirmed one.
    moves = osc(cloud, 'server', 'migration', 'list', '--server', name)
    assert sorted(m['Status'] for m in moves) == ['confirmed', 'reverted']
    assert {m['Type'] for m in moves} == {'resize'}
    osc(cloud, 'server', 'delete', '--wait', name)
    assert arqs_of(cloud, server_id) == []


def test_openstacksdk_creates_waits_and_deletes(cloud):
    conn = sdk(cloud)
    flavor = conn.compute.find_flavor(cloud.flavor, ignore_missing=False)
    image = conn.image.find_image(IMAGE, ignore_missing=False)
    server = conn.compute.create_server(
        name='sdk-' + uuid.uuid4().hex[:6], flavor_id=flavor.id,
        image_id=image.id, networks='none')
    server = conn.compute.wait_for_server(server, wait=120)
    assert server.status == 'ACTIVE'
    bound = [a for a in conn.accelerator.accelerator_requests()
             if a.instance_uuid == server.id]
    assert [a.state for a in bound] == ['Bound']
    conn.compute.delete_server(server)
    conn.compute.wait_for_delete(server, wait=120)
    assert not [a for a in conn.accelerator.accelerator_requests()
                if a.instance_uuid == server.id]


def test_python_novaclient(cloud):
    novaclient = pytest.importorskip('novaclient.client')
    conn = sdk(cloud)
    nova = novaclient.Client('2.96', session=conn.session,
                             endpoint_override=cloud.compute.url)
    flavor = nova.flavors.find(name=cloud.flavor)
    assert flavor.get_keys() == {'accel:device_profile': cloud.profile}
    server = nova.servers.create('nc-' + uuid.uuid4().hex[:6],
                                 images.seeded_id(IMAGE), flavor, nics='none')
    deadline = time.monotonic() + 120
    while nova.servers.get(server.id).status != 'ACTIVE':
        assert nova.servers.get(server.id).status != 'ERROR'
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert server.id in [s.id for s in nova.servers.list()]
    nova.servers.delete(server)
    deadline = time.monotonic() + 120
    while server.id in [s.id for s in nova.servers.list()]:
        assert time.monotonic() < deadline
        time.sleep(0.2)


@pytest.mark.parametrize('path', ['', '/', '/v2.1', '/v2.1/'])
def test_keystoneauth_discovers_the_compute_api(cloud, path):
    """From the root or from ``/v2.1``, as Nova serves them, with the
    microversion range."""
    from keystoneauth1 import adapter
    from keystoneauth1 import noauth
    from keystoneauth1 import session
    compute = adapter.Adapter(
        session.Session(auth=noauth.NoAuth()), service_type='compute',
        endpoint_override=cloud.compute.url.removesuffix('/v2.1') + path,
        version='2')
    data = compute.get_endpoint_data()
    assert data.api_version == (2, 1)
    assert (data.min_microversion, data.max_microversion) == ((2, 1),
                                                              (2, 96))
    assert data.url.rstrip('/').endswith('/v2.1')
