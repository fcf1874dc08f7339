"""A server that serves anonymous callers says so once, at start-up.

``cyborg-lite-api`` with ``[api] auth_strategy = noauth``,
``placement-stub-api`` and ``nova-shim-compute`` with ``noauth2`` print
one WARNING line on stderr (and log it) that names the open URL and how
to close it; with a real strategy they print none. The all-in-one's
lines are checked by its demo test.
"""

import subprocess

import pytest

from placement_stub.fixture import PlacementFixture
from tests.fixtures import processes


def _serve(tmp_path, script, conf_text, timeout=60):
    """Start ``script`` on ``conf_text``; return the URL it printed and
    its stderr once it is stopped."""
    path = tmp_path / (script + '.conf')
    path.write_text(conf_text)
    proc = subprocess.Popen(
        processes.script(script) + ['--config-file', str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1].removesuffix('/v2.1')
        assert url.startswith('http://127.0.0.1:'), url
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=timeout)
    return url, err


def _assert_warned(url, err, warned):
    """One WARNING line naming ``url`` and how to close it when
    ``warned``; none otherwise."""
    lines = [line for line in err.splitlines()
             if line.startswith('WARNING: ')]
    if not warned:
        assert lines == []
        return
    assert len(lines) == 1, err
    assert url in lines[0]
    assert 'auth_strategy = keystone' in lines[0]


API_CONF = """
[DEFAULT]
transport_url = cyborg-local://
[api]
host_ip = 127.0.0.1
port = 0
auth_strategy = %s
http_basic_auth_user_file = %s
"""


@pytest.mark.parametrize('strategy, warned', [('noauth', True),
                                              ('http_basic', False)])
def test_cyborg_lite_api(tmp_path, strategy, warned):
    htpasswd = tmp_path / 'htpasswd'
    htpasswd.write_text('')
    url, err = _serve(tmp_path, 'cyborg-lite-api',
                      API_CONF % (strategy, htpasswd))
    _assert_warned(url, err, warned)


PLACEMENT_CONF = """
[api]
host = 127.0.0.1
port = 0
%s
[placement_database]
connection = sqlite:///%s
"""
# A service user for keystonemiddleware (never reached: no request comes).
KEYSTONE = """
[keystone_authtoken]
auth_type = password
auth_url = http://127.0.0.1:9/v3
username = svc
password = secret
project_name = service
user_domain_name = Default
project_domain_name = Default
"""
# The default is keystone, as in Placement and Nova.
STRATEGIES = [('auth_strategy = noauth2', True), ('', False)]


@pytest.mark.parametrize('setting, warned', STRATEGIES)
def test_placement_stub_api(tmp_path, setting, warned):
    url, err = _serve(tmp_path, 'placement-stub-api', PLACEMENT_CONF % (
        setting, tmp_path / 'placement.sqlite') + KEYSTONE)
    _assert_warned(url, err, warned)


COMPUTE_CONF = """
[DEFAULT]
state_path = %s
[api]
%s
[compute]
api_port = 0
[database]
sync_on_startup = true
[placement]
auth_type = none
endpoint_override = %s
"""


@pytest.mark.parametrize('setting, warned', STRATEGIES)
def test_nova_shim_compute(tmp_path, setting, warned):
    with PlacementFixture() as placement:
        url, err = _serve(tmp_path, 'nova-shim-compute', COMPUTE_CONF % (
            tmp_path, setting, placement.endpoint) + KEYSTONE)
    _assert_warned(url, err, warned)
