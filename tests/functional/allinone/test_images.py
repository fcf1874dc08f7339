"""The all-in-one's Image API: Glance v2's calls that the compute side
and its clients make, its images kept under the state directory."""

import pytest
import requests

from cyborg_lite.allinone import images
from lite_common.wsgi_server import WSGIServer


def _serve(directory):
    return WSGIServer(images.ImageAPI(directory),
                      max_body_size=images.MAX_IMAGE_SIZE).start()


@pytest.fixture
def served(tmp_path):
    service = _serve(str(tmp_path / 'images'))
    yield service
    service.stop()


def test_seeded_images_and_version_discovery(served):
    listed = requests.get(served.url + '/v2/images', timeout=10).json()
    assert {i['name'] for i in listed['images']} == set(images.SEEDED)
    name = next(iter(images.SEEDED))
    found = requests.get(served.url + '/v2/images', params={'name': name},
                         timeout=10).json()['images']
    assert [i['id'] for i in found] == [images.seeded_id(name)]
    assert found[0]['status'] == 'active'
    versions = requests.get(served.url + '/', timeout=10).json()
    assert versions['versions'][0]['links'][0]['href'] == \
        served.url + '/v2/'


def test_a_snapshot_is_kept_across_a_restart(tmp_path):
    directory = str(tmp_path / 'images')
    first = _serve(directory)
    try:
        resp = requests.post(first.url + '/v2/images', json={
            'name': 'snap', 'disk_format': 'qcow2', 'instance_uuid': 'i-1'},
            headers={'X-Project-Id': 'p1'}, timeout=10)
        assert resp.status_code == 201, resp.text
        image = resp.json()
        assert (image['status'], image['owner'], image['instance_uuid']) == (
            'queued', 'p1', 'i-1')
        resp = requests.put(first.url + image['file'], data=b'disk bytes',
                            headers={'Content-Type':
                                     'application/octet-stream'},
                            timeout=10)
        assert resp.status_code == 204, resp.text
    finally:
        first.stop()
    second = _serve(directory)
    try:
        shown = requests.get(second.url + image['self'], timeout=10).json()
        assert (shown['status'], shown['size']) == ('active', 10)
        assert second.app.data[image['id']] == b'disk bytes'
        assert requests.delete(second.url + image['self'],
                               timeout=10).status_code == 204
        assert requests.get(second.url + image['self'],
                            timeout=10).status_code == 404
    finally:
        second.stop()


@pytest.mark.parametrize('method, path, kwargs, status', [
    ('POST', '/v2/images', {'data': b'{not json'}, 400),
    ('POST', '/v2/images', {'json': ['a list']}, 400),
    ('POST', '/v2/images', {'json': {'id': 'mine'}}, 403),
    ('GET', '/v2/images?limit=x', {}, 400),
    ('GET', '/v2/images?limit=0', {}, 400),
    ('GET', '/v2/images?marker=nope', {}, 400),
    ('GET', '/v2/nothing', {}, 404),
    ('GET', '/v2/images/%s/file/extra/more' % images.seeded_id(
        'ubuntu-24.04'), {}, 404),
    ('PATCH', '/v2/images', {}, 405),
    ('PUT', '/v2/images/%s/file' % images.seeded_id('ubuntu-24.04'),
     {'data': b'x', 'headers': {'Content-Type': 'text/plain'}}, 415),
])
def test_bad_requests_are_4xx_in_glances_body(served, method, path, kwargs,
                                              status):
    resp = requests.request(method, served.url + path, timeout=10, **kwargs)
    assert resp.status_code == status, resp.text
    assert resp.json()['code'] == status
