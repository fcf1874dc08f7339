"""discover(), its JSON rendering and ``cyborg-lite-agent``."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

from cyborg_lite.agent import discover
from cyborg_lite.cmd import agent as agent_cmd
from cyborg_lite import model
from tests.fixtures import sysfs_tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
CONFIG = '''[DEFAULT]
host = compute1
[agent]
enabled_drivers = nvidia_gpu,intel_fpga,xilinx_fpga
[gpu_devices]
enabled_vgpu_types = nvidia-223
filter_sriov_vfs = true
'''
EXPECTED = [  # deployable name, rc, handles, traits
    ('compute1_0000:af:00.0', 'VGPU', 8,
     ['CUSTOM_NVIDIA_1EB8_T4_2B', 'OWNER_CYBORG']),
    ('compute1_0000:3b:00.0', 'PGPU', 1,
     ['CUSTOM_NVIDIA_20F1', 'OWNER_CYBORG']),
    ('compute1_0000:5e:00.0', 'FPGA', 1,
     ['CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A3C413F89E433683F9040B',
      'CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_PAC_ARRIA10',
      'CUSTOM_FPGA_REGION_INTEL_9926AB6D6C925A68AABCA7D84C545738']),
    ('compute1_0000:d8:00.0', 'FPGA', 2,
     ['CUSTOM_FPGA_PRODUCT_ID_5004', 'CUSTOM_FPGA_XILINX']),
]


def _summary(report):
    rows = [(dep['name'], dep['resource_class'], len(dep['attach_handles']),
             dep['traits'])
            for dev in report['devices'] for dep in dev['deployables']]
    return sorted(rows)


def _write_config(tmp_path):
    path = tmp_path / 'agent.conf'
    path.write_text(CONFIG)
    return str(path)


def test_discover_concatenates_the_enabled_drivers(conf_factory):
    conf = conf_factory('mixed_host', CONFIG)
    devices = discover.discover(conf)
    assert [d.deployables[0].name for d in devices] == [
        'compute1_0000:3b:00.0', 'compute1_0000:af:00.0',
        'compute1_0000:5e:00.0', 'compute1_0000:d8:00.0']
    report = discover.to_report('compute1', devices)
    assert _summary(report) == sorted(EXPECTED)
    assert report['digest'] == model.report_digest(devices)
    rebuilt = [model.DriverDevice.from_dict(d) for d in report['devices']]
    assert rebuilt == devices


def test_main_discover_only_prints_json(tmp_path, capsys):
    rc = agent_cmd.main([
        '--discover-only', '--config-file', _write_config(tmp_path),
        '--sysfs-root', sysfs_tree.fixture_path('mixed_host')])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report['hostname'] == 'compute1'
    assert _summary(report) == sorted(EXPECTED)


def test_main_reports_an_unknown_driver(tmp_path, capsys):
    path = tmp_path / 'bad.conf'
    path.write_text('[agent]\nenabled_drivers = nope\n')
    rc = agent_cmd.main(['--discover-only', '--config-file', str(path)])
    assert rc == 1
    assert "unknown driver 'nope'" in capsys.readouterr().err


def test_without_discover_only_the_agent_serves_until_sigterm(tmp_path):
    """The service mode: an RPC server and reports, stopped by SIGTERM.
    No conductor listens here, so the first report goes unanswered and
    the agent keeps retrying instead of dying."""
    config = tmp_path / 'agent.conf'
    config.write_text(
        '[DEFAULT]\ntransport_url = cyborg-local://\n'
        'rpc_response_timeout = 1\nlog_file = %s\n'
        '[agent]\nenabled_drivers = fake\nresource_provider_name = c1\n'
        % (tmp_path / 'agent.log'))
    proc = subprocess.Popen(
        [sys.executable, '-m', 'cyborg_lite.cmd.agent', '--config-file',
         str(config)], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        log = tmp_path / 'agent.log'
        while time.monotonic() < deadline:
            text = log.read_text() if log.exists() else ''
            if 'Agent c1 started with drivers fake' in text:
                break
            time.sleep(0.2)
        assert 'got no answer' in text
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_discover_only_as_a_process(tmp_path):
    result = subprocess.run(
        [sys.executable, '-m', 'cyborg_lite.cmd.agent', '--discover-only',
         '--config-file', _write_config(tmp_path),
         '--sysfs-root', sysfs_tree.fixture_path('mixed_host')],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert _summary(json.loads(result.stdout)) == sorted(EXPECTED)


def test_discover_only_defaults_to_the_real_drivers_and_nova_host_name(
        tmp_path, capsys):
    """No config at all: the real drivers (no made-up devices), and the
    host name Nova's [DEFAULT] host defaults to."""
    rc = agent_cmd.main(['--discover-only', '--sysfs-root',
                         sysfs_tree.fixture_path('mixed_host')])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report['hostname'] == socket.gethostname()
    models = sorted({dev['model'] for dev in report['devices']})
    assert models == ['GA100 [A100 PCIe 40GB]', 'PAC_ARRIA10',
                      'TU104GL [Tesla T4]', 'U250']


def test_a_sysfs_root_that_does_not_exist_is_an_error(tmp_path, capsys):
    missing = str(tmp_path / 'no-such-sys')
    rc = agent_cmd.main(['--discover-only', '--sysfs-root', missing])
    assert rc == 2
    captured = capsys.readouterr()
    assert captured.out == ''
    assert missing in captured.err and 'not a directory' in captured.err
