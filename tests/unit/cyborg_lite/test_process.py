"""What every process does first: a log file that cannot be written is
one clear line and an exit, not a traceback."""

import pytest

from cyborg_lite import process


def test_a_log_file_in_a_missing_directory_is_one_line(tmp_path):
    path = tmp_path / 'no-such-dir' / 'cyborg-lite.log'
    with pytest.raises(SystemExit) as exit_:
        process.setup(['--log-file', str(path)])
    message = str(exit_.value.code)
    assert '\n' not in message
    assert 'cannot write the log file %s' % path in message
    assert 'does not exist' in message

