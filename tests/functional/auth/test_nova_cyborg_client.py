"""Nova 34's own Cyborg client (``nova.accelerator.cyborg``), unmodified,
against the live API behind a real Keystone.

Nova comes from PyPI into its own virtualenv (``.venv-nova``, made by
``tools/run-tests.sh``); ``.nova_cyborg_driver`` runs there with
Nova's configuration (``[cyborg] endpoint_override``, ``[service_user]``
as nova, ``send_service_user_token``) and a user's token, and prints what
each call saw. Without that virtualenv, or Keystone's, it is skipped.
"""

import json
import os
import subprocess

import pytest

from tests.fixtures import cyborg_api
from tests.functional.auth import conftest
from tests.functional.placement_clients import test_nova

DRIVER = os.path.join(os.path.dirname(__file__), 'nova_cyborg_driver.py')


@pytest.fixture(scope='module')
def keystone_stack(keystone, tmp_path_factory):
    mode = conftest.keystone_identities(keystone)
    stack = cyborg_api.CyborgStack(tmp_path_factory.mktemp('nova-cyborg'),
                                   overrides=mode.api_overrides)
    mode.configure_api(stack.aio.conf)
    with stack:
        stack.mode = mode
        yield stack


def test_nova_drives_an_instances_arqs(keystone_stack):
    python = test_nova.nova_python()
    if python is None:
        pytest.skip('Nova is not installed (.venv-nova)')
    stack, mode = keystone_stack, keystone_stack.mode
    admin = conftest.Caller(stack, mode.headers('admin'))
    profile = 'nova-own-client'
    resp = admin.post('/device_profiles', json=[
        {'name': profile, 'groups': [{'resources:FPGA': '1'}]}])
    assert resp.status_code == 201, resp.text
    (fpga,) = [d for d in admin.get('/deployables').json()['deployables']
               if '"FPGA"' in d['attributes_list']]
    args = {'endpoint': stack.url + '/v2', 'auth_url': mode.url,
            'user_token': mode.tokens['alice'], 'user_id': 'alice',
            'project_id': mode.project('alice'),
            'service_password': conftest.PASSWORD % 'nova',
            'profile': profile, 'rp_uuid': fpga['rp_uuid'],
            'hostname': stack.aio.hostnames[0]}
    result = subprocess.run([python, DRIVER, json.dumps(args)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])

    assert seen['request_groups'] == [{'requester_id': 'device_profile_0',
                                       'resources': {'FPGA': 1}}]
    assert seen['created'] == [['Initial', fpga['rp_uuid']]]
    ((arq, state, hostname),) = seen['resolved']
    assert (state, hostname) == ('Bound', stack.aio.hostnames[0])
    assert seen['all'] == seen['uuids'] == seen['created_uuids'] == [arq]
    assert 'returned no accelerator requests' in seen['after_delete']
    # Gone for Cyborg too.
    assert admin.get('/accelerator_requests/' + arq).status_code == 404
