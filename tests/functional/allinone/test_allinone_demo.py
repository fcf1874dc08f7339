"""``cyborg-lite-allinone --demo``: accelerated guests end to end, on
the embedded defaults, in one process."""

import pytest

from cyborg_lite.cmd import allinone


@pytest.mark.slow
def test_demo_boots_guests_and_leaves_nothing_behind(tmp_path, capsys):
    assert allinone.main(['--demo', '--api-port', '0', '--compute-port', '0',
                          '--placement-port', '0', '--image-port', '0',
                          '--identity-port', '0',
                          '--state-dir', str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert 'cyborg-lite API: http://127.0.0.1:' in out
    # Anonymous callers are served, and start-up says so: one line for
    # the API, one for the embedded Placement and one for the compute
    # API, each naming its URL.
    warnings = [line for line in err.splitlines()
                if line.startswith('WARNING: ')]
    assert len(warnings) == 3, err
    api_url = out.split('cyborg-lite API: ')[1].split('/v2')[0]
    assert api_url in warnings[0] and 'noauth' in warnings[0]
    assert 'placement-stub at http://127.0.0.1:' in warnings[1]
    assert "nova_shim's compute API at http://127.0.0.1:" in warnings[2]
    assert 'auth_strategy = noauth2' in warnings[2]
    # A whole A100 by PCI passthrough, then a T4 vGPU as an mdev.
    assert 'hostdevs: pci 0000:3b:00.0' in out
    assert 'hostdevs: mdev ' in out
    assert 'mdevs on the hosts now: 1' in out
    for step in ('boot', 'stop', 'start', 'hard reboot'):
        assert out.count('  %s ' % step) >= 2
    assert out.count('Bound') >= 10
    # A vGPU guest rescheduled off a host whose GPU refuses new vGPUs,
    # then evacuated back once its host is marked down.
    assert 'refusing new vGPUs' in out
    attempts = [line for line in out.splitlines()
                if line.startswith('  attempts: ')]
    assert len(attempts) == 1 and '(failed: bind)' in attempts[0] \
        and attempts[0].endswith('(ok)'), out
    evacuated = [line for line in out.splitlines()
                 if line.startswith('  evacuate ')]
    assert len(evacuated) == 1 and 'ACTIVE' in evacuated[0] \
        and 'Bound' in evacuated[0] and 'hostdevs: mdev ' in evacuated[0]
    # Then cold-migrated to the other vGPU host and confirmed: one Bound
    # ARQ there, another mdev.
    moves = {line.split()[0]: line for line in out.splitlines()
             if line.startswith(('  migrate ', '  confirm '))}
    assert set(moves) == {'migrate', 'confirm'}, out
    assert 'VERIFY_RESIZE' in moves['migrate'] and \
        'ACTIVE' in moves['confirm']
    for line in moves.values():
        assert 'Bound' in line and 'hostdevs: mdev ' in line
    assert evacuated[0].split('host=')[1].split()[0] != \
        moves['confirm'].split('host=')[1].split()[0]
    assert 'Left behind: 0 ARQ(s), 0 allocation(s), 0 mdev(s)' in out
    assert (tmp_path / 'cyborg-lite.log').exists()
