"""Each long-running console script's ``--help`` says what it is."""

import pytest

from cyborg_lite.cmd import api
from cyborg_lite.cmd import conductor
from cyborg_lite.cmd import status


@pytest.mark.parametrize('command', [api, conductor, status])
def test_help_starts_with_what_the_program_is(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        command.main(['--help'])
    assert exit_.value.code == 0
    out = ' '.join(capsys.readouterr().out.split())
    assert ' '.join(command.DESCRIPTION.split()) in out
    assert '--config-file' in out
