"""A service whose authentication cannot work refuses to start.

``[api] auth_strategy = keystone`` without the service user that
keystonemiddleware validates tokens with, or ``http_basic`` without a
readable htpasswd file, would fail every request; instead each service
(the cyborg-lite API, the placement stub and nova_shim's compute API)
prints one line on stderr that names the options to set, and exits 1.
Under gunicorn the worker prints the same line and gunicorn stops
(status 4, its "App failed to load"), with no traceback and nothing
served.
"""

import os
import subprocess

import pytest

from tests.fixtures import processes

KEYSTONE_WITHOUT_USER = '[api]\nauth_strategy = keystone\n'
BASIC_WITHOUT_FILE = ('[api]\nauth_strategy = http_basic\n'
                      'http_basic_auth_user_file = %(dir)s/missing\n')
# An htpasswd file whose entry is no bcrypt hash.
BASIC_WITH_A_BAD_FILE = ('[api]\nauth_strategy = http_basic\n'
                         'http_basic_auth_user_file = %(dir)s/plain\n')

SERVICES = {
    'cyborg-lite-api': '[DEFAULT]\ntransport_url = cyborg-local://\n'
                       '[database]\nconnection = sqlite:///%(dir)s/c.db\n',
    'placement-stub-api': '[placement_database]\n'
                          'connection = sqlite:///%(dir)s/p.db\n',
    # It refuses before it reaches Placement, libvirt or its database.
    'nova-shim-compute': '[DEFAULT]\nstate_path = %(dir)s\n'
                         '[compute]\napi_port = 0\n',
}
CASES = [(KEYSTONE_WITHOUT_USER, '[keystone_authtoken] auth_type'),
         (BASIC_WITHOUT_FILE, 'No such file or directory'),
         (BASIC_WITH_A_BAD_FILE, 'Only bcrypt digested passwords')]


def _write(tmp_path, service, strategy):
    (tmp_path / 'plain').write_text('alice:secret\n')
    path = tmp_path / 'service.conf'
    path.write_text((SERVICES[service] + strategy) % {'dir': tmp_path})
    return str(path)


@pytest.mark.parametrize('strategy, named', CASES)
@pytest.mark.parametrize('service', sorted(SERVICES))
def test_the_console_script_refuses_in_one_line(tmp_path, service,
                                                strategy, named):
    conf = _write(tmp_path, service, strategy)
    result = subprocess.run(
        processes.script(service) + ['--config-file', conf],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result
    assert result.stdout == ''
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(service + ' cannot start: '), lines
    assert '[api] auth_strategy = ' in lines[0] and named in lines[0]


@pytest.mark.parametrize('app, variable, service', [
    ('cyborg_lite.api.wsgi:application', 'CYBORG_LITE_CONFIG_FILES',
     'cyborg-lite-api'),
    ('placement_stub.wsgi:application', 'PLACEMENT_STUB_CONFIG_FILES',
     'placement-stub-api')])
def test_gunicorn_stops_with_the_line(tmp_path, app, variable, service):
    conf = _write(tmp_path, service, KEYSTONE_WITHOUT_USER)
    result = subprocess.run(
        processes.script('gunicorn') + [
            # One worker: when several fail at once, gunicorn's master
            # may print its own HaltServer traceback as it stops.
            '--workers', '1', '--bind', '127.0.0.1:0', '--no-control-socket',
            app],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, **{variable: conf}))
    assert result.returncode == 4, result
    assert 'Traceback' not in result.stderr
    ours = [line for line in result.stderr.splitlines()
            if not line.startswith('[')]
    assert ours and set(ours) == {ours[0]}, result.stderr
    assert 'cannot start: [api] auth_strategy = keystone' in ours[0]
    assert 'App failed to load' in result.stderr
