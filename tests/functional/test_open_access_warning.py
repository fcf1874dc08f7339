"""A server that serves anonymous callers says so once, at start-up.

``cyborg-lite-api`` with ``[api] auth_strategy = noauth`` and
``placement-stub-api`` with ``noauth2`` print one WARNING line on stderr
(and log it) that names the open URL and how to close it; with a real
strategy they print none. The all-in-one's line is checked by its demo
test.
"""

import subprocess

import pytest

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
        url = proc.stdout.readline().split()[-1]
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


@pytest.mark.parametrize('setting, warned', [
    ('auth_strategy = noauth2', True),
    # The default is keystone, as in Placement.
    ('', False)])
def test_placement_stub_api(tmp_path, setting, warned):
    url, err = _serve(tmp_path, 'placement-stub-api', PLACEMENT_CONF % (
        setting, tmp_path / 'placement.sqlite'))
    _assert_warned(url, err, warned)
