"""Every service logs through oslo.log with the same options; a
``log_file`` in a directory that does not exist ends it with one line
that says so, never a traceback (cyborg-lite's own is checked in
``tests/unit/cyborg_lite/test_process.py``)."""

import subprocess

import pytest

from tests.fixtures import processes

CONFS = {
    'placement-stub-api': '[placement_database]\nconnection = sqlite://\n'
                          '[api]\nauth_strategy = noauth2\n',
    'placement-stub-manage': '[placement_database]\n'
                             'connection = sqlite://\n',
    'nova-shim-compute': '[DEFAULT]\nstate_path = %(dir)s\n[api]\n'
                         'auth_strategy = noauth2\n',
    'nova-shim-manage': '[DEFAULT]\nstate_path = %(dir)s\n',
}
ARGS = {'placement-stub-manage': ['db', 'sync'],
        'nova-shim-manage': ['db', 'sync']}


@pytest.mark.parametrize('script', sorted(CONFS))
def test_a_log_file_in_a_missing_directory_is_one_line(tmp_path, script):
    conf = tmp_path / 'service.conf'
    missing = tmp_path / 'no-such-dir' / 'service.log'
    conf.write_text('[DEFAULT]\nlog_file = %s\n' % missing +
                    CONFS[script] % {'dir': tmp_path})
    result = subprocess.run(
        processes.script(script) + ['--config-file', str(conf)] +
        ARGS.get(script, []), capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result
    assert result.stderr.strip().splitlines() == [
        '%s: cannot write the log file %s: the directory %s does not '
        'exist (create it, or change log_file or log_dir)'
        % (script, missing, missing.parent)], result.stderr


def test_the_log_file_gets_the_services_lines(tmp_path):
    log = tmp_path / 'manage.log'
    conf = tmp_path / 'service.conf'
    conf.write_text('[DEFAULT]\nlog_file = %s\ndebug = true\nstate_path = '
                    '%s\n' % (log, tmp_path))
    result = subprocess.run(
        processes.script('nova-shim-manage') + [
            '--config-file', str(conf), 'db', 'sync'],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result
    # alembic's lines, through oslo.log's format, in the file.
    assert 'Running upgrade' in log.read_text()
