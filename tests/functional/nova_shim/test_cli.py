"""The ``nova-shim`` CLI against the whole chain, in-process."""

import pytest

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim.cmd import cli  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa

DP = 'cli-fpga'


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('chain')).start()
    chain.create_profile(DP, {'resources:FPGA': '1'})
    try:
        yield chain
    finally:
        chain.stop()


def nova_shim(chain, capsys, *args):
    code = cli.main(['--url', chain.service.url + '/v2.1',
                     '--project', 'p-cli'] + list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_lifecycle(chain, capsys):
    code, out, err = nova_shim(chain, capsys, 'boot', '--device-profile',
                               DP, 'cli-vm')
    assert code == 0, err
    assert 'ACTIVE' in out
    assert 'Bound' in out and 'hostdev' in out and 'pci' in out
    code, out, _ = nova_shim(chain, capsys, 'list')
    assert 'cli-vm' in out and 'ACTIVE' in out
    for command, status in ((['stop'], 'SHUTOFF'), (['start'], 'ACTIVE'),
                            (['reboot'], None), (['reboot', '--hard'], None),
                            (['pause'], 'PAUSED'), (['unpause'], 'ACTIVE'),
                            (['rebuild'], None)):
        code, out, err = nova_shim(chain, capsys, *command, 'cli-vm')
        assert code == 0, (command, err)
        # Each prints the state the server is in once accepted.
        assert 'cli-vm' in out and '(task: ' in out, (command, out)
        if status is not None:
            assert ' %s ' % status in out, (command, out)
    code, out, _ = nova_shim(chain, capsys, 'show', 'cli-vm')
    assert 'ACTIVE' in out and 'hostdev' in out
    assert nova_shim(chain, capsys, 'shelve', 'cli-vm')[0] == 0
    assert 'SHELVED_OFFLOADED' in nova_shim(chain, capsys, 'show',
                                            'cli-vm')[1]
    code, out, _ = nova_shim(chain, capsys, 'unshelve', '--wait', 'cli-vm')
    assert code == 0 and 'ACTIVE' in out and 'Bound' in out
    # A resize moves it (the chain has one host: to the same one, which
    # the test allows), and a revert brings it back as it was.
    chain.conf.set_override('allow_resize_to_same_host', True)
    try:
        code, out, err = nova_shim(chain, capsys, 'resize', '--wait',
                                   'cli-vm', 'm1.small')
    finally:
        chain.conf.clear_override('allow_resize_to_same_host')
    assert code == 0 and 'VERIFY_RESIZE' in out, (out, err)
    code, out, _ = nova_shim(chain, capsys, 'resize-revert', 'cli-vm')
    assert code == 0 and 'REVERT_RESIZE' in out
    chain.service.manager.wait_for_background()
    assert 'ACTIVE' in nova_shim(chain, capsys, 'show', 'cli-vm')[1]
    # A migration is a manager's or an admin's, by Nova's policy; with
    # one host, no host is left for it and the server stays as it was.
    code, _, err = nova_shim(chain, capsys, 'migrate', 'cli-vm')
    assert code == 1 and "Policy doesn't allow" in err
    code, out, _ = nova_shim(chain, capsys, '--admin', 'migrate', '--wait',
                             'cli-vm')
    assert code == 0 and 'ACTIVE' in out
    for command in (['--admin', 'live-migrate', 'cli-vm'],
                    ['suspend', 'cli-vm'], ['resume', 'cli-vm']):
        code, _, err = nova_shim(chain, capsys, *command)
        assert code == 1, command
        assert 'not supported with instances that have accelerators' in err
    code, out, _ = nova_shim(chain, capsys, 'delete', 'cli-vm')
    assert code == 0 and 'cli-vm' in out and 'deleted' in out
    code, _, err = nova_shim(chain, capsys, 'show', 'cli-vm')
    assert code == 1 and "no server named 'cli-vm'" in err


def test_cli_boot_failure_exits_non_zero(chain, capsys):
    code, out, err = nova_shim(chain, capsys, 'boot', '--device-profile',
                               'no-such-profile', 'cli-bad')
    assert code == 1
    assert 'ERROR' in out and 'no-such-profile' in out
    assert nova_shim(chain, capsys, 'delete', 'cli-bad')[0] == 0
    code, _, err = nova_shim(chain, capsys, 'boot', '--device-profile', DP,
                             '--flavor', 'no-such-flavor', 'x')
    assert code == 1 and 'no-such-flavor' in err
