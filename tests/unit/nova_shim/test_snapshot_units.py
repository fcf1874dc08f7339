"""Pure parts of snapshots and backups: the root disk in a domain XML,
backup rotation, the image client's configuration and the answer's
form by microversion."""

import pytest
import requests
import webob

from nova_shim.api import http
from nova_shim.api.handlers import image_actions
from nova_shim.compute import snapshot
from nova_shim import conf as shim_conf
from nova_shim.context import RequestContext
from nova_shim.image import glance
from nova_shim.virt.snapshot import root_disk
from nova_shim.virt.snapshot import RootDisk

CTX = RequestContext(user_id='u', project_id='p')


def domain(*disks: str) -> str:
    return '<domain><devices>%s</devices></domain>' % ''.join(disks)


def test_root_disk_is_the_first_file_disk():
    assert root_disk(domain()) == RootDisk(None, 'raw')
    cdrom = ("<disk type='file' device='cdrom'>"
             "<source file='/x.iso'/></disk>")
    network = ("<disk type='network' device='disk'>"
               "<source protocol='rbd' name='pool/vol'/></disk>")
    no_source = "<disk type='file' device='disk'/>"
    qcow2 = ("<disk type='file' device='disk'><driver type='qcow2'/>"
             "<source file='/d.qcow2'/></disk>")
    raw = "<disk type='file'><source file='/d.img'/></disk>"
    vpc = ("<disk type='file' device='disk'><driver type='vpc'/>"
           "<source file='/d.vhd'/></disk>")
    assert root_disk(domain(cdrom, network, no_source)) == RootDisk(None,
                                                                    'raw')
    assert root_disk(domain(cdrom, qcow2, raw)) == RootDisk('/d.qcow2',
                                                            'qcow2')
    assert root_disk(domain(raw, qcow2)) == RootDisk('/d.img', 'raw')
    assert root_disk(domain(vpc)) == RootDisk('/d.vhd', 'vhd')


class FakeImages:
    def __init__(self, images):
        self.images = images
        self.deleted = []

    def list(self, filters):
        return list(self.images)

    def delete(self, image_id):
        self.deleted.append(image_id)
        return True


def backup_image(image_id, backup_type='daily', instance='i-1'):
    return {'id': image_id, 'instance_uuid': instance,
            'image_type': 'backup', 'backup_type': backup_type}


def test_rotation_keeps_the_new_backup_first():
    # Glance sorts by created_at (seconds): the new one may tie and come
    # after an older one.
    client = FakeImages([backup_image('old-1'), backup_image('new'),
                         backup_image('old-2'), backup_image('old-3')])
    assert snapshot.rotate_backups(client, 'i-1', 'daily', 2, 'new') == [
        'old-2', 'old-3']


def test_rotation_ignores_images_it_did_not_ask_for():
    client = FakeImages([backup_image('new'), backup_image('weekly',
                                                           'weekly'),
                         backup_image('other', instance='i-2'),
                         dict(backup_image('snap'), image_type='snapshot'),
                         backup_image('old')])
    assert snapshot.rotate_backups(client, 'i-1', 'daily', 1, 'new') == [
        'old']
    client = FakeImages([backup_image('new'), backup_image('old')])
    assert snapshot.rotate_backups(client, 'i-1', 'daily', 0, 'new') == [
        'new', 'old']


def test_no_endpoint_is_not_configured():
    conf = shim_conf.build_conf()
    with pytest.raises(glance.ImageServiceNotConfigured,
                       match=r'createImage cannot run.*\[glance\]'):
        glance.get_client(CTX, conf, 'createImage')
    conf.set_override('auth_type', 'none', group='glance')
    with pytest.raises(glance.ImageServiceNotConfigured):
        glance.get_client(CTX, conf)


@pytest.mark.parametrize('endpoint', [
    'http://glance:9292', 'http://glance:9292/', 'http://glance:9292/v2',
    'http://glance:9292/v2.1/'])
def test_the_version_suffix_is_dropped(endpoint):
    conf = shim_conf.build_conf(overrides={
        ('glance', 'auth_type'): 'none',
        ('glance', 'endpoint_override'): endpoint})
    client = glance.get_client(CTX, conf)
    assert client.root == 'http://glance:9292'
    assert client.image_url('i') == 'http://glance:9292/v2/images/i'


def test_the_users_catalog_is_an_endpoint():
    ctx = RequestContext(user_id='u', project_id='p', auth_token='t',
                         service_catalog=[{'type': 'image', 'endpoints': [
                             {'interface': 'public',
                              'url': 'http://img.example/image'}]}])
    client = glance.get_client(ctx, shim_conf.build_conf())
    assert client.root == 'http://img.example/image'


@pytest.mark.parametrize('version, body, location', [
    ((2, 1), None, 'http://g/v2/images/i'),
    ((2, 44), None, 'http://g/v2/images/i'),
    ((2, 45), {'image_id': 'i'}, None),
    ((2, 96), {'image_id': 'i'}, None),
])
def test_the_answer_depends_on_the_microversion(version, body, location):
    req = webob.Request.blank('/', environ={http.VERSION_KEY: version})
    resp = req.get_response(image_actions.ImageResponse(
        'i', 'http://g/v2/images/i'))
    assert resp.status_int == 202
    assert (resp.json if resp.body else None) == body
    assert resp.headers.get('Location') == location
    # A backup with rotation 0 has no Location, as in Nova.
    resp = req.get_response(image_actions.ImageResponse('i', None))
    assert 'Location' not in resp.headers


def _glance_answer(status, body, content_type='application/json'):
    resp = requests.Response()
    resp.status_code = status
    resp._content = body
    resp.headers['Content-Type'] = content_type
    return resp


def test_glance_error_messages():
    assert glance.decode_error(_glance_answer(
        403, b'{"message": "Attribute \'id\' is reserved.", "code": 403}')
    ) == "Attribute 'id' is reserved."
    assert glance.decode_error(_glance_answer(
        401, b'{"error": {"message": "The request you have made requires '
        b'authentication.", "code": 401}}')).startswith('The request')
    assert glance.decode_error(_glance_answer(
        500, b'<html>\n  oops  </html>', 'text/html')) == \
        '<html> oops </html>'
