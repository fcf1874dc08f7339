"""Upstream's API tests, unmodified, against the live cyborg-lite API.

cyborg-tempest-plugin's ``cyborg_tempest_plugin.tests.api`` (tempest and
the plugin live in ``.venv-tempest``, which ``tools/run-tests.sh``
installs; without it these tests are skipped) runs once per session
against the all-in-one's API in ``keystone`` mode, behind a real Keystone
(``.venv-keystone``) whose catalog names the API as the ``accelerator``
service. Tempest makes its own users for each persona with dynamic
credentials (admin, project admin, manager, member and reader, a
service-role user, a system-scoped admin), as a devstack gate does, and
the plugin is told that the API has the new policy defaults only
(``[cyborg_policy] enforce_new_defaults = True``), which is what
cyborg-lite serves.

Each upstream test is one case here. The few where cyborg-lite answers a
4xx on purpose where upstream answers 500 are expected to fail, each with
its reason (``DELIBERATE``).
"""

import json
import os
import subprocess

import pytest

from tests.fixtures import cyborg_api
from tests.functional.auth import conftest as auth_conftest
from tests.functional.auth import keystone_server

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, 'run_plugin.py')
PREFIX = 'cyborg_tempest_plugin.tests.api.'
_UPSTREAM_500 = ('upstream answers 500 here and the test expects a server '
                 'fault; cyborg-lite answers ')
# test id (without PREFIX) -> (why cyborg-lite fails it on purpose, the
# tempest exception its 4xx raises instead of ServerFault).
DELIBERATE = {
    'test_device_profile_negative.DeviceProfileNegativeTest.'
    'test_create_device_profile_name_is_null':
        (_UPSTREAM_500 + '400: a device profile needs a name',
         'BadRequest'),
    'test_device_profile_negative.DeviceProfileNegativeTest.'
    'test_create_device_profile_name_to_long':
        (_UPSTREAM_500 + '400: names are at most 255 characters',
         'BadRequest'),
    'test_device_profile_negative.DeviceProfileNegativeTest.'
    'test_create_device_profile_server_fault':
        (_UPSTREAM_500 + '409: the uuid belongs to another profile',
         'Conflict'),
}

TEMPEST_CONF = """[DEFAULT]
log_file = {state}/tempest.log
[identity]
uri_v3 = {keystone}
auth_version = v3
region = RegionOne
[auth]
use_dynamic_credentials = True
admin_username = admin
admin_password = {admin_password}
admin_project_name = admin
admin_domain_name = Default
tempest_roles = member
[identity-feature-enabled]
api_v2 = False
[service_available]
cyborg = True
nova = False
glance = False
neutron = False
cinder = False
swift = False
[cyborg_policy]
enforce_new_defaults = True
"""


def tempest_python():
    """The tempest virtualenv's interpreter, or None."""
    path = os.environ.get('CYBORG_LITE_TEST_TEMPEST_PYTHON') or os.path.join(
        HERE, '..', '..', '..', '.venv-tempest', 'bin', 'python')
    return path if os.path.exists(path) else None


def _runner_env(conf_dir):
    return dict(os.environ, TEMPEST_CONFIG_DIR=str(conf_dir),
                TEMPEST_CONFIG='tempest.conf')


def _plugin_tests():
    python = tempest_python()
    if python is None:
        return []
    listed = subprocess.run(
        [python, RUNNER, 'list'], capture_output=True, text=True,
        env=_runner_env(HERE), check=True)
    return [line[len(PREFIX):] for line in listed.stdout.split()
            if line.startswith(PREFIX)]


def pytest_generate_tests(metafunc):
    if 'upstream_test' in metafunc.fixturenames:
        tests = _plugin_tests() or [None]
        metafunc.parametrize('upstream_test', tests,
                             ids=[t or 'not-installed' for t in tests])


def _register_accelerator_endpoint(identities, url):
    admin = identities._token('admin', 'admin',
                              keystone_server.ADMIN_PASSWORD)
    service = identities._call(admin, 'POST', '/services', {'service': {
        'type': 'accelerator', 'name': 'cyborg'}})['service']
    for interface in ('public', 'internal', 'admin'):
        identities._call(admin, 'POST', '/endpoints', {'endpoint': {
            'service_id': service['id'], 'interface': interface,
            'url': url, 'region_id': 'RegionOne'}})


@pytest.fixture(scope='session')
def plugin_outcomes(tmp_path_factory, keystone):
    """Runs the whole plugin once; test id -> {outcome, detail}."""
    python = tempest_python()
    if python is None:
        pytest.skip('tempest is not installed (tools/run-tests.sh puts it '
                    'in .venv-tempest)')
    identities = auth_conftest.keystone_identities(keystone)
    state = tmp_path_factory.mktemp('tempest')
    stack = cyborg_api.CyborgStack(state / 'stack',
                                   overrides=identities.api_overrides)
    identities.configure_api(stack.aio.conf)
    with stack:
        _register_accelerator_endpoint(identities, stack.url + '/v2')
        (state / 'tempest.conf').write_text(TEMPEST_CONF.format(
            state=state, keystone=identities.url,
            admin_password=keystone_server.ADMIN_PASSWORD))
        out = state / 'outcomes.json'
        run = subprocess.run([python, RUNNER, 'run', str(out)],
                             capture_output=True, text=True, cwd=state,
                             env=_runner_env(state), timeout=900)
        if not out.exists():
            pytest.fail('the plugin did not run:\n' + run.stderr[-4000:])
        outcomes = json.loads(out.read_text())
    return {k[len(PREFIX):]: v for k, v in outcomes.items()
            if k.startswith(PREFIX)}


def test_upstream_api_test(upstream_test, plugin_outcomes):
    result = plugin_outcomes.get(upstream_test)
    assert result is not None, 'the plugin run did not report this test'
    if upstream_test in DELIBERATE:
        reason, raised = DELIBERATE[upstream_test]
        assert result['outcome'] == 'failed', result
        assert 'tempest.lib.exceptions.%s' % raised in result['detail']
        pytest.xfail(reason)
    assert result['outcome'] == 'passed', result['detail']
