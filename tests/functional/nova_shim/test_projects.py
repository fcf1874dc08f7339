"""A project sees and acts on its own servers only; an admin on all.

Another project's server is a 404 to show, delete or act on, as in
Nova, and nothing of it changes.
"""

import pytest

from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

PROFILE = 'projects-fpga'
OTHER = {'X-Project-Id': 'p-other', 'X-User-Id': 'u-other',
         'X-Roles': 'member,reader'}
ADMIN = {'X-Project-Id': 'p-admin', 'X-User-Id': 'u-admin',
         'X-Roles': 'admin,member,reader'}


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('projects')).start()
    chain.create_profile(PROFILE, {'resources:FPGA': '1'})
    yield chain
    chain.stop()


def test_another_projects_server_is_not_found(chain):
    server_id = chain.boot('mine', PROFILE)
    chain.wait(server_id, 'ACTIVE')
    before = chain.show(server_id)
    path = '/servers/' + server_id
    for method, target, body in [
            ('GET', path, None), ('DELETE', path, None),
            ('POST', path + '/action', {'os-stop': None}),
            ('POST', path + '/action', {'reboot': {'type': 'HARD'}}),
            ('POST', path + '/action', {'shelve': None})]:
        resp = chain.api(method, target, json=body, headers=OTHER)
        assert resp.status_code == 404, (method, target, resp.text)
    assert server_id not in [s['id'] for s in chain.api(
        'GET', '/servers', headers=OTHER).json()['servers']]
    after = chain.show(server_id)
    assert (after['status'], after['accelerator_requests']) == (
        before['status'], before['accelerator_requests'])
    # An admin sees it and may delete it.
    assert chain.api('GET', path, headers=ADMIN).status_code == 200
    assert chain.api('DELETE', path, headers=ADMIN).status_code == 204
    chain.service.manager.wait_for_background()
    assert chain.api('GET', path).status_code == 404
    assert chain.cyborg_arqs(server_id) == []
