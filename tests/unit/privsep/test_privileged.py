"""The agent's privileged functions, through a real privsep daemon.

``UnprivilegedPrivsepFixture`` (oslo.privsep's own test fixture) forks
a daemon of the context from the test process, without capabilities,
and each call crosses its channel as in production: arguments and
answers serialised, exceptions rebuilt by class. The daemon reads its
``[agent]`` options from the global ``cfg.CONF``, as a daemon started
by ``privsep-helper --config-file`` reads them from its files.
"""

import os
import stat
import sys

from oslo_config import cfg
from oslo_config import fixture as cfg_fixture
from oslo_privsep.test import fixture as privsep_fixture
import pytest

from cyborg_lite.conf import agent as agent_conf
from cyborg_lite import privsep
from cyborg_lite.privsep import fpga
from cyborg_lite.privsep import sysfs as privsep_sysfs

MDEV = '8f2c1a3e-5b7d-4e6f-9a0b-1c2d3e4f5a6b'
TYPE_DIR = 'devices/pci0000:00/0000:af:00.0/mdev_supported_types/nvidia-223'


@pytest.fixture
def daemon_conf():
    """The global ``cfg.CONF`` that the forked daemons read."""
    fixture = cfg_fixture.Config(cfg.CONF)
    fixture.setUp()
    cfg.CONF.register_opts(agent_conf.PRIVILEGED_OPTS, group='agent')
    try:
        yield fixture
    finally:
        fixture.cleanUp()


@pytest.fixture
def daemons(daemon_conf):
    """Starts both contexts' daemons, forked with ``[agent]`` options
    as its arguments give them (the daemon's own configuration)."""
    fixtures = []

    def start(**options):
        daemon_conf.config(group='agent', **options)
        privsep.run_in_process(False)
        for context in privsep.CONTEXTS:
            fixture = privsep_fixture.UnprivilegedPrivsepFixture(context, {})
            fixture.setUp()
            fixtures.append(fixture)
    try:
        yield start
    finally:
        for fixture in fixtures:
            fixture.cleanUp()
        privsep.run_in_process(True)


@pytest.fixture
def tree(tmp_path):
    """A sysfs root with one mdev type's ``create`` and one mdev's
    ``remove``, root-only files as the kernel's are."""
    root = tmp_path / 'sys'
    type_dir = root / TYPE_DIR
    type_dir.mkdir(parents=True)
    mdev_dir = root / 'devices/pci0000:00/0000:af:00.0' / MDEV
    mdev_dir.mkdir()
    for path in (type_dir / 'create', mdev_dir / 'remove'):
        path.write_text('')
        path.chmod(stat.S_IWUSR)
    return root


def test_the_daemon_writes_an_mdev_creation_and_removal(daemons, tree):
    daemons(sysfs_root=str(tree))
    create = str(tree / TYPE_DIR / 'create')
    privsep_sysfs.write_control_attribute(create, MDEV)
    assert open(create).read() == MDEV
    remove = str(tree / 'devices/pci0000:00/0000:af:00.0' / MDEV / 'remove')
    privsep_sysfs.write_control_attribute(remove, '1')
    assert open(remove).read() == '1'


@pytest.mark.parametrize('relative,value,why', [
    (TYPE_DIR + '/create', 'not-a-uuid', 'is not an mdev uuid'),
    (TYPE_DIR + '/create', MDEV.upper(), 'is not an mdev uuid'),
    ('devices/pci0000:00/0000:af:00.0/%s/remove' % MDEV, '0',
     'an mdev is removed by writing 1'),
    (TYPE_DIR + '/available_instances', '1',
     'not an mdev control attribute'),
    ('devices/pci0000:00/0000:af:00.0/driver_override', 'vfio-pci',
     'not an mdev control attribute'),
    (TYPE_DIR + '/../nvidia-223/create', MDEV,
     'not a normalised absolute path'),
])
def test_the_daemon_refuses_what_is_no_mdev_write(daemons, tree, relative,
                                                  value, why):
    daemons(sysfs_root=str(tree))
    path = str(tree) + '/' + relative
    with pytest.raises(privsep.RefusedAction, match=why):
        privsep_sysfs.write_control_attribute(path, value)


def test_the_daemon_writes_only_under_its_own_sysfs_root(daemons, tree,
                                                        tmp_path):
    # The agent's tree, but the daemon's files name another root.
    daemons(sysfs_root=str(tmp_path / 'elsewhere'))
    with pytest.raises(privsep.RefusedAction, match='outside'):
        privsep_sysfs.write_control_attribute(
            str(tree / TYPE_DIR / 'create'), MDEV)
    assert open(tree / TYPE_DIR / 'create').read() == ''


def test_a_link_anywhere_on_the_path_is_not_followed(daemons, tree,
                                                     tmp_path):
    # An mdev type directory swapped for a link to another tree with
    # the same shape: the write must not land there.
    daemons(sysfs_root=str(tree))
    decoy = tmp_path / 'decoy' / 'mdev_supported_types' / 'nvidia-223'
    decoy.mkdir(parents=True)
    (decoy / 'create').write_text('')
    types = tree / 'devices/pci0000:00/0000:af:00.0/mdev_supported_types'
    os.rename(types / 'nvidia-223', tmp_path / 'moved')
    os.symlink(decoy, types / 'nvidia-223')
    with pytest.raises(OSError):
        privsep_sysfs.write_control_attribute(
            str(types / 'nvidia-223' / 'create'), MDEV)
    assert (decoy / 'create').read_text() == ''


def test_a_file_that_is_not_there_is_not_created(daemons, tree):
    daemons(sysfs_root=str(tree))
    (tree / TYPE_DIR / 'create').unlink()
    with pytest.raises(FileNotFoundError):
        privsep_sysfs.write_control_attribute(
            str(tree / TYPE_DIR / 'create'), MDEV)
    assert not (tree / TYPE_DIR / 'create').exists()


# -- FPGA programming ---------------------------------------------------


@pytest.fixture
def program(tmp_path):
    """A programming tool that records its arguments and its parent
    (the process that ran it)."""
    record = tmp_path / 'record'
    script = tmp_path / 'program'
    script.write_text('#!/bin/sh\necho "$PPID $*" > %s\n'
                      'case "$2" in *slow*) sleep 30;; *bad*) '
                      'echo broken >&2; exit 3;; esac\n' % record)
    script.chmod(0o755)
    bitstreams = tmp_path / 'bitstreams'
    bitstreams.mkdir()
    return str(script), str(bitstreams), record


def _configure(daemons, command, bitstreams, timeout=600):
    daemons(fpga_program_command=command, bitstream_dir=bitstreams,
            fpga_program_timeout=timeout)


def test_the_daemon_runs_its_configured_command(daemons, program):
    command, bitstreams, record = program
    _configure(daemons, command, bitstreams)
    bitstream = os.path.join(bitstreams, 'bs-1')
    assert fpga.run_program_command(command, '0000:0c:00.0', bitstream,
                                    600) == (0, '')
    parent, args = record.read_text().split(' ', 1)
    assert args.split() == ['0000:0c:00.0', bitstream]
    # The daemon ran it, not this process.
    assert int(parent) != os.getpid()


def test_the_tools_failure_comes_back(daemons, program):
    command, bitstreams, _record = program
    _configure(daemons, command, bitstreams)
    assert fpga.run_program_command(
        command, '0000:0c:00.0', os.path.join(bitstreams, 'bad-1'),
        600) == (3, 'broken\n')


def test_a_tool_past_its_timeout_is_killed(daemons, program):
    command, bitstreams, _record = program
    _configure(daemons, command, bitstreams, timeout=1)
    assert fpga.run_program_command(
        command, '0000:0c:00.0', os.path.join(bitstreams, 'slow-1'),
        1) == (None, '')


@pytest.mark.parametrize('change,why', [
    ({'command': 'rm -rf /'}, "not the daemon's"),
    ({'command': sys.executable + ' -c pass'}, "not the daemon's"),
    ({'timeout': 100000}, 'fpga_program_timeout'),
    ({'bitstream': '/etc/shadow'}, 'not a bitstream'),
    ({'bitstream': '{dir}/../x'}, 'not a bitstream'),
    ({'address': '0000:0c:00.0; reboot'}, 'not a PCI address'),
])
def test_the_daemon_runs_nothing_else(daemons, program, change, why):
    command, bitstreams, record = program
    _configure(daemons, command, bitstreams)
    call = {'command': command, 'address': '0000:0c:00.0',
            'bitstream': os.path.join(bitstreams, 'bs-1'), 'timeout': 600}
    call.update({k: v.format(dir=bitstreams) if isinstance(v, str) else v
                 for k, v in change.items()})
    with pytest.raises(privsep.RefusedAction, match=why):
        fpga.run_program_command(call['command'], call['address'],
                                 call['bitstream'], call['timeout'])
    assert not record.exists()


def test_each_function_is_its_own_contexts():
    # A daemon runs only its own context's functions.
    assert privsep.sysfs_admin.is_entrypoint(
        privsep_sysfs.write_control_attribute)
    assert not privsep.fpga_admin.is_entrypoint(
        privsep_sysfs.write_control_attribute)
    assert privsep.fpga_admin.is_entrypoint(fpga.run_program_command)
    for context in privsep.CONTEXTS:
        assert cfg.CONF[context.cfg_section].capabilities == []
