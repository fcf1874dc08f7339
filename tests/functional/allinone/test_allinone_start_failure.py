"""``cyborg-lite-allinone`` that cannot start says why on the terminal,
in one line naming the log, and exits 1."""

import socket

from cyborg_lite.cmd import allinone


def test_a_port_in_use_is_named_with_what_to_do(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert allinone.main(['--api-port', str(port), '--hosts', 'fake',
                              '--compute-port', '0', '--placement-port',
                              '0', '--image-port', '0', '--identity-port',
                              '0',
                              '--state-dir', str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    log = tmp_path / 'cyborg-lite.log'
    assert err == ['cyborg-lite-allinone: 127.0.0.1:%d is in use: choose '
                   'other ports with --api-port, --compute-port, '
                   '--placement-port, --image-port and --identity-port (0 '
                   'picks a free one) (log: %s)' % (port, log)]
    assert 'Address already in use' in log.read_text()
