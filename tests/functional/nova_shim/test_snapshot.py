"""createImage and createBackup of servers with accelerators, end to end.

The real chain (see test_lifecycle_chain) with ``[glance]`` pointing at
a loopback Image API v2 (tests.fixtures.fake_glance) that records what
it receives: the image records and their properties, the uploaded bytes,
the task_state the server shows while each Glance call runs, and that
the ARQs stay Bound and the same.
"""

import shutil
import uuid as uuidlib
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim.cmd import cli  # noqa: E402
from nova_shim.compute import states  # noqa: E402
from nova_shim import conf as shim_conf  # noqa: E402
from nova_shim import exception  # noqa: E402
from nova_shim.virt.libvirt import GuestSpec  # noqa: E402
from nova_shim.virt.libvirt import LibvirtDriver  # noqa: E402
from nova_shim.virt.power_state import PowerState  # noqa: E402
from nova_shim.virt import snapshot as disk_snapshot  # noqa: E402
from tests.fixtures.fake_glance import FakeGlance  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

DP = 'snapshot-fpga'
V245 = dict(HEADERS, **{'OpenStack-API-Version': 'compute 2.45'})


@pytest.fixture(scope='module')
def glance():
    glance = FakeGlance().start()
    try:
        yield glance
    finally:
        glance.stop()


@pytest.fixture(scope='module')
def chain(tmp_path_factory, glance):
    chain = Chain(tmp_path_factory.mktemp('chain')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


@pytest.fixture
def glance_conf(chain, glance):
    """[glance] set to the loopback Glance (noauth, identity headers)."""
    chain.conf.set_override('auth_type', 'none', group='glance')
    chain.conf.set_override('endpoint_override', glance.url + '/v2',
                            group='glance')
    glance.reset()
    yield glance
    chain.conf.clear_override('auth_type', group='glance')
    chain.conf.clear_override('endpoint_override', group='glance')
    glance.reset()


@pytest.fixture
def server(chain):
    server_id = chain.boot('snap-vm', DP)
    chain.wait(server_id, 'ACTIVE')
    yield server_id
    chain.api('DELETE', '/servers/' + server_id)


def arqs_of(chain, server_id):
    return [(a['uuid'], a['state'], a['device_rp_uuid'])
            for a in chain.show(server_id)['accelerator_requests']]


def watch_task_states(chain, glance, server_id):
    """(method, kind, task_state) as each Glance call arrives."""
    seen = []
    glance.on_request = lambda method, kind: seen.append(
        (method, kind, chain.show(server_id)['OS-EXT-STS:task_state']))
    return seen


def assert_nova_error(resp, status, key):
    assert resp.status_code == status, resp.text
    assert resp.json()[key]['code'] == status
    assert 'Traceback' not in resp.text
    return resp.json()[key]['message']


def test_create_image_keeps_the_arqs(chain, glance_conf, server):
    glance = glance_conf
    before = chain.show(server)
    arqs = arqs_of(chain, server)
    assert [state for _, state, _ in arqs] == ['Bound']
    seen = watch_task_states(chain, glance, server)
    resp = chain.api('POST', '/servers/%s/action' % server, headers=V245,
                     json={'createImage': {'name': 'snap-1', 'metadata': {
                         'purpose': 'test', 'image_type': 'overridden?'}}})
    assert resp.status_code == 202, resp.text
    image_id = resp.json()['image_id']
    assert 'Location' not in resp.headers
    # The instance went image_snapshot -> image_uploading -> None.
    assert seen == [('POST', 'images', states.IMAGE_SNAPSHOT),
                    ('PUT', 'file', states.IMAGE_UPLOADING)]
    image = glance.images[image_id]
    assert image['name'] == 'snap-1'
    assert (image['disk_format'], image['container_format']) == ('raw',
                                                                 'bare')
    assert image['visibility'] == 'private'
    assert image['instance_uuid'] == server
    assert image['user_id'] == 'u-demo'
    assert image['owner'] == 'p-demo'
    assert image['purpose'] == 'test'
    # nova_shim's properties take precedence over the metadata.
    assert image['image_type'] == 'snapshot'
    assert 'backup_type' not in image
    assert image['status'] == 'active'
    # libvirt's test driver guests have no disk file: an empty raw image.
    assert glance.data[image_id] == b''
    upload, = glance.calls('PUT')
    assert upload['path'] == '/v2/images/%s/file' % image_id
    assert upload['headers']['Content-Type'] == 'application/octet-stream'
    after = chain.show(server)
    assert after['status'] == 'ACTIVE'
    assert after['OS-EXT-STS:task_state'] is None
    assert after['OS-EXT-STS:power_state'] == 1
    assert after['hostdevs'] == before['hostdevs']
    assert arqs_of(chain, server) == arqs


def test_create_image_before_2_45_answers_with_location(chain, glance_conf,
                                                         server):
    resp = chain.action(server, {'createImage': {'name': 'snap-old'}})
    assert resp.status_code == 202, resp.text
    assert resp.content == b''
    image_id, = glance_conf.images
    assert resp.headers['Location'] == '%s/v2/images/%s' % (
        glance_conf.url, image_id)


def test_snapshot_of_a_stopped_guest_uploads_its_disk_file(
        chain, glance_conf, server, tmp_path):
    arqs = arqs_of(chain, server)
    assert chain.action(server, {'os-stop': None}).status_code == 202
    disk = tmp_path / 'disk.qcow2'
    disk.write_bytes(b'QFI\xfb' + bytes(range(256)) * 64)
    # The guest's domain with a root disk file, as a real host has it.
    conn = chain.service.deps.driver.host.get_connection()
    root = ET.fromstring(conn.lookupByUUIDString(server).XMLDesc(0))
    elem = ET.SubElement(root.find('devices'), 'disk', type='file',
                         device='disk')
    ET.SubElement(elem, 'driver', name='qemu', type='qcow2')
    ET.SubElement(elem, 'source', file=str(disk))
    ET.SubElement(elem, 'target', dev='vda', bus='virtio')
    conn.defineXML(ET.tostring(root, encoding='unicode'))
    resp = chain.api('POST', '/servers/%s/action' % server, headers=V245,
                     json={'createImage': {'name': 'snap-disk'}})
    assert resp.status_code == 202, resp.text
    image_id = resp.json()['image_id']
    assert glance_conf.data[image_id] == disk.read_bytes()
    assert glance_conf.images[image_id]['disk_format'] == 'qcow2'
    assert glance_conf.images[image_id]['size'] == disk.stat().st_size
    stopped = chain.show(server)
    assert (stopped['status'], stopped['OS-EXT-STS:task_state']) == (
        'SHUTOFF', None)
    assert chain.action(server, {'os-start': None}).status_code == 202
    assert chain.show(server)['status'] == 'ACTIVE'
    assert arqs_of(chain, server) == arqs


def test_an_admin_snapshot_is_shared_with_the_owner(chain, glance_conf,
                                                    server):
    admin = dict(V245, **{'X-Project-Id': 'p-admin', 'X-User-Id': 'u-admin',
                          'X-Roles': 'admin,member,reader'})
    resp = chain.api('POST', '/servers/%s/action' % server, headers=admin,
                     json={'createImage': {'name': 'snap-admin'}})
    assert resp.status_code == 202, resp.text
    image = glance_conf.images[resp.json()['image_id']]
    assert (image['owner'], image['visibility']) == ('p-admin', 'shared')
    assert image['instance_owner'] == 'p-demo'
    assert image['members'] == ['p-demo']


def backup(chain, server, name, rotation, backup_type='daily'):
    resp = chain.api('POST', '/servers/%s/action' % server, headers=V245,
                     json={'createBackup': {'name': name,
                                            'backup_type': backup_type,
                                            'rotation': rotation}})
    assert resp.status_code == 202, resp.text
    return resp.json()['image_id']


def test_backup_rotation_keeps_the_newest(chain, glance_conf, server):
    glance = glance_conf
    glance.page_size = 1  # rotation follows Glance's next links
    arqs = arqs_of(chain, server)
    try:
        seen = watch_task_states(chain, glance, server)
        weekly = backup(chain, server, 'weekly-1', 1, 'weekly')
        assert seen[:2] == [('POST', 'images', states.IMAGE_BACKUP),
                            ('PUT', 'file', states.IMAGE_UPLOADING)]
        glance.on_request = None
        ids = [backup(chain, server, 'daily-%d' % n, 2) for n in range(3)]
    finally:
        glance.page_size = 25
    assert sorted(glance.images) == sorted([weekly] + ids[1:])
    for image_id in ids[1:]:
        image = glance.images[image_id]
        assert (image['image_type'], image['backup_type']) == ('backup',
                                                               'daily')
        assert image['instance_uuid'] == server
    listings = [c['query'] for c in glance.calls('GET')
                if c['kind'] == 'images']
    assert any('marker' in query for query in listings)
    assert [q for q in listings if 'marker' not in q][-1] == {
        'instance_uuid': server, 'image_type': 'backup',
        'backup_type': 'daily', 'sort_key': 'created_at', 'sort_dir': 'desc'}
    deleted = [c['path'] for c in glance.calls('DELETE')]
    assert deleted == ['/v2/images/' + ids[0]]
    server_now = chain.show(server)
    assert (server_now['status'], server_now['OS-EXT-STS:task_state']) == (
        'ACTIVE', None)
    assert arqs_of(chain, server) == arqs


def test_backup_rotation_zero_and_location(chain, glance_conf, server):
    resp = chain.action(server, {'createBackup': {
        'name': 'b0', 'backup_type': 'daily', 'rotation': '0'}})
    assert resp.status_code == 202, resp.text
    # As Nova: rotation 0 deletes every backup, and no Location.
    assert 'Location' not in resp.headers
    assert glance_conf.images == {}
    resp = chain.action(server, {'createBackup': {
        'name': 'b1', 'backup_type': 'daily', 'rotation': 1}})
    assert resp.status_code == 202, resp.text
    image_id, = glance_conf.images
    assert resp.headers['Location'].endswith('/v2/images/' + image_id)


@pytest.mark.parametrize('body', [
    {'createImage': None},
    {'createImage': {}},
    {'createImage': {'name': ''}},
    {'createImage': {'name': 7}},
    {'createImage': {'name': ' padded '}},
    {'createImage': {'name': 'x' * 256}},
    {'createImage': {'name': 'x', 'metadata': []}},
    {'createImage': {'name': 'x', 'metadata': {'k': 1}}},
    {'createImage': {'name': 'x', 'metadata': {'a/b': 'v'}}},
    {'createImage': {'name': 'x', 'other': 1}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily'}},
    {'createBackup': {'name': 'x', 'rotation': 1}},
    {'createBackup': {'backup_type': 'daily', 'rotation': 1}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily', 'rotation': -1}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily', 'rotation': 'x'}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily', 'rotation': 1.5}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily',
                      'rotation': True}},
    {'createBackup': {'name': 'x', 'backup_type': 3, 'rotation': 1}},
    {'createBackup': {'name': 'x', 'backup_type': 'd', 'rotation': 1,
                      'extra': 1}},
])
def test_bad_bodies_are_400(chain, glance_conf, server, body):
    resp = chain.action(server, body)
    assert_nova_error(resp, 400, 'badRequest')
    assert glance_conf.requests == []
    assert chain.show(server)['OS-EXT-STS:task_state'] is None


@pytest.mark.parametrize('body', [
    {'createImage': {'name': 'x'}},
    {'createBackup': {'name': 'x', 'backup_type': 'daily', 'rotation': 1}},
])
def test_without_an_image_service_it_is_a_400(chain, glance, server, body):
    glance.reset()
    resp = chain.action(server, body)
    message = assert_nova_error(resp, 400, 'badRequest')
    assert 'No image service is configured' in message
    assert '[glance]' in message
    assert glance.requests == []
    assert chain.show(server)['OS-EXT-STS:task_state'] is None


def test_wrong_state_is_a_409(chain, glance_conf, server):
    # Another task runs: the compare-and-swap refuses.
    chain.service.deps.db.update(server, task_state=states.REBOOTING)
    try:
        resp = chain.action(server, {'createImage': {'name': 'x'}})
        message = assert_nova_error(resp, 409, 'conflictingRequest')
        assert 'task_state rebooting' in message
    finally:
        chain.service.deps.db.update(server, task_state=None)
    # Shelved and offloaded: no host, as Nova's check_instance_host.
    assert chain.action(server, {'shelve': None}).status_code == 202
    for body in ({'createImage': {'name': 'x'}},
                 {'createBackup': {'name': 'x', 'backup_type': 'daily',
                                   'rotation': 1}}):
        resp = chain.action(server, body)
        assert_nova_error(resp, 409, 'conflictingRequest')
    assert glance_conf.requests == []
    assert chain.show(server)['status'] == 'SHELVED_OFFLOADED'


@pytest.mark.parametrize('failure, glance_status, status, key', [
    (('POST', 'images'), 500, 503, 'serviceUnavailable'),
    (('PUT', 'file'), 500, 503, 'serviceUnavailable'),
    (('PUT', 'file'), 403, 403, 'forbidden'),
    (('POST', 'images'), 400, 400, 'badRequest'),
])
def test_image_service_failure_clears_the_task_state(
        chain, glance_conf, server, failure, glance_status, status, key):
    glance_conf.fail[failure] = glance_status
    arqs = arqs_of(chain, server)
    resp = chain.action(server, {'createImage': {'name': 'x'}})
    message = assert_nova_error(resp, status, key)
    assert 'Glance returned %d' % glance_status in message
    assert 'injected failure' in message
    shown = chain.show(server)
    assert (shown['status'], shown['OS-EXT-STS:vm_state'],
            shown['OS-EXT-STS:task_state']) == ('ACTIVE', 'active', None)
    # An image created before the failure is deleted again.
    assert glance_conf.images == {}
    assert arqs_of(chain, server) == arqs


def test_unreachable_image_service_is_a_503(chain, glance_conf, server):
    chain.conf.set_override('endpoint_override', 'http://127.0.0.1:9',
                            group='glance')
    resp = chain.action(server, {'createBackup': {
        'name': 'x', 'backup_type': 'daily', 'rotation': 1}})
    message = assert_nova_error(resp, 503, 'serviceUnavailable')
    assert 'could not reach the image service' in message
    assert chain.show(server)['OS-EXT-STS:task_state'] is None


def test_failed_rotation_says_the_backup_exists(chain, glance_conf, server):
    glance_conf.fail[('GET', 'images')] = 500
    resp = chain.action(server, {'createBackup': {
        'name': 'x', 'backup_type': 'daily', 'rotation': 1}})
    message = assert_nova_error(resp, 503, 'serviceUnavailable')
    image_id, = glance_conf.images
    assert 'Backup image %s was uploaded' % image_id in message
    assert glance_conf.images[image_id]['status'] == 'active'
    assert chain.show(server)['OS-EXT-STS:task_state'] is None


def test_cli_image_create_and_backup(chain, glance_conf, server, capsys):
    def nova_shim(*args):
        code = cli.main(['--url', chain.service.url + '/v2.1',
                         '--project', 'p-demo'] + list(args))
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = nova_shim('image-create', '--metadata', 'k=v', server,
                               'cli-snap')
    assert code == 0, err
    image_id = out.strip()
    image = glance_conf.images[image_id]
    assert (image['name'], image['k'], image['image_type']) == (
        'cli-snap', 'v', 'snapshot')
    code, out, err = nova_shim('backup', server, 'cli-backup', 'daily', '1')
    assert code == 0, err
    assert glance_conf.images[out.strip()]['backup_type'] == 'daily'
    code, _, err = nova_shim('backup', server, 'b', 'daily', '-1')
    assert code == 1 and 'rotation' in err
    chain.conf.clear_override('endpoint_override', group='glance')
    code, _, err = nova_shim('image-create', server, 'cli-snap')
    assert code == 1 and 'No image service is configured' in err


@pytest.fixture
def driver():
    driver = LibvirtDriver(shim_conf.build_conf())
    driver.init_host()
    yield driver
    driver.cleanup_host()


def test_a_running_guest_is_paused_while_its_disk_is_copied(
        driver, tmp_path, monkeypatch):
    disk = tmp_path / 'disk.qcow2'
    disk.write_bytes(b'QFI\xfb' + b'x' * 300000)
    guest = GuestSpec(uuid=str(uuidlib.uuid4()), vcpus=1, memory_mb=128,
                      disk_path=str(disk))
    driver.spawn(guest, [])
    workdir = tmp_path / 'snapshots'
    during = []
    copy = shutil.copyfileobj

    def copy_and_look(*args):
        during.append(driver.get_power_state(guest.uuid))
        copy(*args)
    monkeypatch.setattr(disk_snapshot.shutil, 'copyfileobj', copy_and_look)
    try:
        found = disk_snapshot.root_disk(driver.get_xml(guest.uuid))
        assert found == disk_snapshot.RootDisk(str(disk), 'qcow2')
        with disk_snapshot.disk_contents(driver, guest.uuid, found,
                                         str(workdir)) as data:
            # The copy is read, not the disk the guest writes to.
            assert data.name.startswith(str(workdir))
            assert data.read() == disk.read_bytes()
        assert during == [PowerState.PAUSED]
        assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
        assert list(workdir.iterdir()) == []
        missing = disk_snapshot.RootDisk(str(tmp_path / 'gone'), 'raw')
        with pytest.raises(exception.HypervisorError, match='cannot copy'):
            with disk_snapshot.disk_contents(driver, guest.uuid, missing,
                                             str(workdir)):
                pass
        assert driver.get_power_state(guest.uuid) == PowerState.RUNNING
        assert list(workdir.iterdir()) == []
    finally:
        driver.destroy(guest.uuid)
