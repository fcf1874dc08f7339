"""``cyborg-lite-allinone --demo``: accelerated guests end to end, on
the embedded defaults, in one process."""

import pytest

from cyborg_lite.cmd import allinone


@pytest.mark.slow
def test_demo_boots_guests_and_leaves_nothing_behind(tmp_path, capsys):
    assert allinone.main(['--demo', '--api-port', '0',
                          '--state-dir', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'cyborg-lite API: http://127.0.0.1:' in out
    # A whole A100 by PCI passthrough, then a T4 vGPU as an mdev.
    assert 'hostdevs: pci 0000:3b:00.0' in out
    assert 'hostdevs: mdev ' in out
    assert 'mdevs on the hosts now: 1' in out
    for step in ('boot', 'stop', 'start', 'hard reboot'):
        assert out.count('  %s ' % step) >= 2
    assert out.count('Bound') >= 8
    assert 'Left behind: 0 ARQ(s), 0 allocation(s), 0 mdev(s)' in out
    assert (tmp_path / 'cyborg-lite.log').exists()
