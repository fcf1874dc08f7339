"""Discovery on a hostile or changing host.

Every test builds a host with a spare card of each driver
(``tests.fixtures.sysfs_tree.spares_host``), breaks one function the
way a real host can break it (a half-bound driver, a firmware that
writes odd bytes, a card unplugged during the scan, a link that leads
out of ``/sys``) and checks that discovery skips that function with one
warning that names it and why, and reports every other device.
"""

import json
import logging
import re
import os
import subprocess
import sys
import threading
import tracemalloc

import pytest

from cyborg_lite import model
from cyborg_lite.agent import discover
from cyborg_lite.agent import service as agent_service
from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.drivers import fake
from cyborg_lite.agent.drivers import nvidia_gpu
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite.cmd import agent as agent_cmd
from cyborg_lite import local_transport
from cyborg_lite import rpc
from tests.fixtures import sysfs_tree
from tests.unit.agent.conftest import HOST

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
T4 = sysfs_tree.SPARES['nvidia_gpu']
PAC = sysfs_tree.SPARES['intel_fpga']
U250 = sysfs_tree.SPARES['xilinx_fpga']
# Deployables of an intact spares host: the first card and the spare of
# each driver (the A100's VFs are filtered, the U250 user PFs are
# handles of their cards).
ALL = sorted('%s_%s' % (HOST, a) for a in (
    '0000:3b:00.0', '0000:af:00.0', T4, '0000:5e:00.0', PAC,
    '0000:d8:00.0', U250))
# A report of the host stays this small, whatever its files hold.
MAX_REPORT_BYTES = 64 * 1024
# Discovery may hold this much memory at once, whatever its files hold
# (a 100 MB attribute must not be read).
MAX_PEAK_BYTES = 4 * 1024 * 1024
HUGE = 100 * 1024 * 1024


@pytest.fixture
def root(tmp_path):
    return sysfs_tree.spares_host(tmp_path / 'host')


@pytest.fixture
def conf(conf_factory, root):
    return conf_factory(None, CONFIG, sysfs_root=root)


def _names(devices):
    return sorted(dep.name for d in devices for dep in d.deployables)


def _without(*addresses):
    return [n for n in ALL if n.split('_', 1)[1] not in addresses]


def _warnings(caplog, text):
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and text in r.getMessage()]


def _discover_skipping(conf, caplog, address, reason, skipped=None):
    """Discover; ``address`` is skipped with one warning matching
    ``reason``, and exactly the other deployables are reported."""
    caplog.set_level(logging.WARNING)
    devices = discover.discover(conf)
    assert _names(devices) == _without(*(skipped or [address]))
    [line] = _warnings(caplog, address)
    assert _matches(reason, line), line
    report = discover.render_json(HOST, devices)
    assert len(report) < MAX_REPORT_BYTES
    return devices


def _matches(reason, line):
    """Whether the warning's words (its paths left out: a path holds the
    test's own name and the file's) say ``reason``."""
    words = re.sub(r'\S*/\S*', ' ', line).lower()
    return any(r.lower() in words for r in reason.split('|'))


def _dev(root, address, *parts):
    return sysfs_tree.device_file(root, address, *parts)


def _type_file(root, address, name, mdev_type='nvidia-223'):
    return _dev(root, address, 'mdev_supported_types', mdev_type, name)


def _write(path, data):
    with open(sysfs_tree.replace(path), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def test_an_intact_spares_host_reports_every_card(conf, caplog):
    caplog.set_level(logging.WARNING)
    devices = discover.discover(conf)
    assert _names(devices) == ALL
    by_name = {dep.name: dep for d in devices for dep in d.deployables}
    spare = by_name['%s_%s' % (HOST, T4)]
    assert (spare.resource_class, spare.num_accelerators) == ('VGPU', 8)
    assert spare.traits == ['CUSTOM_NVIDIA_1EB8_T4_2B', 'OWNER_CYBORG']
    for address in sysfs_tree.SPARES.values():
        assert _warnings(caplog, address) == []


# --- symlink loops --------------------------------------------------------

def test_a_device_entry_that_loops(root, conf, caplog):
    link = sysfs_tree.replace(os.path.join(root, 'bus/pci/devices', T4))
    os.symlink(T4, link)  # a link to itself
    _discover_skipping(conf, caplog, T4, 'symbolic links|loop')


def test_a_vendor_file_that_loops(root, conf, caplog):
    vendor = sysfs_tree.replace(_dev(root, T4, 'vendor'))
    os.symlink('vendor.b', vendor)
    os.symlink('vendor', _dev(root, T4, 'vendor.b'))
    _discover_skipping(conf, caplog, T4, 'symbolic links|loop')


# --- missing files, and directories where files should be ----------------

@pytest.mark.parametrize('name', ['vendor', 'device', 'class'])
def test_a_missing_id_file(root, conf, caplog, name):
    os.remove(_dev(root, T4, name))
    _discover_skipping(conf, caplog, T4, 'no %s' % name)


def test_a_missing_available_instances(root, conf, caplog):
    os.remove(_type_file(root, T4, 'available_instances'))
    _discover_skipping(conf, caplog, T4, 'available_instances')


@pytest.mark.parametrize('name', ['vendor', 'class'])
def test_a_directory_where_a_file_should_be(root, conf, caplog, name):
    os.mkdir(sysfs_tree.replace(_dev(root, T4, name)))
    _discover_skipping(conf, caplog, T4, 'not a regular file')


def test_a_device_entry_that_is_a_file(root, conf, caplog):
    _write(os.path.join(root, 'bus/pci/devices', T4), '0x10de\n')
    _discover_skipping(conf, caplog, T4, 'not a directory')


def test_a_fifo_where_a_file_should_be(root, conf, caplog):
    """Opening a FIFO for reading waits for a writer: it must not even
    be opened."""
    os.mkfifo(sysfs_tree.replace(_dev(root, T4, 'vendor')))
    _discover_skipping(conf, caplog, T4, 'not a regular file')


# --- bytes that are not text ---------------------------------------------

def test_non_utf8_bytes_in_an_id(root, conf, caplog):
    _write(_dev(root, T4, 'vendor'), b'0x10\xde\xff\n')
    _discover_skipping(conf, caplog, T4, 'utf-8')


def test_non_utf8_bytes_in_a_vgpu_type_name(root, conf, caplog):
    _write(_type_file(root, T4, 'name'), b'GRID T4-2B\xff\xfe\n')
    _discover_skipping(conf, caplog, T4, 'utf-8')


# --- links that leave the sysfs root -------------------------------------

def test_a_device_entry_leading_outside_the_root(root, conf, caplog,
                                                 tmp_path):
    """A complete T4 outside the root is not on this host."""
    outside = str(tmp_path / 'elsewhere' / T4)
    os.makedirs(os.path.dirname(outside))
    os.rename(sysfs_tree.device_dir(root, T4), outside)
    link = sysfs_tree.replace(os.path.join(root, 'bus/pci/devices', T4))
    os.symlink(outside, link)
    _discover_skipping(conf, caplog, T4, 'outside')


def test_a_vendor_file_leading_outside_the_root(root, conf, caplog,
                                                tmp_path):
    outside = tmp_path / 'vendor'
    outside.write_text('0x10de\n')
    os.symlink(str(outside), sysfs_tree.replace(_dev(root, T4, 'vendor')))
    _discover_skipping(conf, caplog, T4, 'outside')


def test_a_vendor_file_leading_to_dev_zero(root, conf, caplog):
    """/dev/zero never ends: it must be refused, not read."""
    os.symlink('/dev/zero', sysfs_tree.replace(_dev(root, T4, 'vendor')))
    tracemalloc.start()
    try:
        _discover_skipping(conf, caplog, T4, 'outside')
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK_BYTES


@pytest.mark.parametrize('name', ['driver', 'iommu_group'])
def test_a_device_link_leading_outside_the_root(root, conf, caplog,
                                                tmp_path, name):
    os.symlink(str(tmp_path), sysfs_tree.replace(_dev(root, T4, name)))
    _discover_skipping(conf, caplog, T4, 'outside')


def test_a_virtfn_leading_outside_the_root(root, conf, caplog, tmp_path):
    os.symlink(str(tmp_path / '0000:99:00.1'), _dev(root, T4, 'virtfn0'))
    _discover_skipping(conf, caplog, T4, 'outside')


def test_a_vgpu_type_leading_outside_the_root(root, conf, caplog,
                                              tmp_path):
    type_dir = _dev(root, T4, 'mdev_supported_types', 'nvidia-223')
    outside = str(tmp_path / 'nvidia-223')
    os.rename(type_dir, outside)
    os.symlink(outside, type_dir)
    _discover_skipping(conf, caplog, T4, 'outside')


# --- huge attributes -----------------------------------------------------

@pytest.mark.parametrize('where,head,tail', [
    ('device', b'0x1eb8', b''),
    ('class', b'0x030200', b'\n'),
    ('vgpu name', b'GRID T4-', b'X\n'),
])
def test_a_100_mb_attribute(root, conf, caplog, where, head, tail):
    """A sparse 100 MB file is neither read whole nor reported."""
    path = (_type_file(root, T4, 'name') if where == 'vgpu name'
            else _dev(root, T4, where))
    sysfs_tree.sparse_file(path, HUGE, head, tail)
    tracemalloc.start()
    try:
        _discover_skipping(conf, caplog, T4, 'more than')
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK_BYTES


# --- values of the wrong shape -------------------------------------------

@pytest.mark.parametrize('name,value,reason', [
    ('vendor', 'zzzz', 'not a 4-digit hex id'),
    ('vendor', '0x10de0', 'not a 4-digit hex id'),
    ('vendor', '0x10de\x00', 'not a 4-digit hex id'),
    ('device', '', 'empty|not a 4-digit hex id'),
    ('device', '0x1eb8 0x1eb8', 'not a 4-digit hex id'),
    ('class', '0x0302', 'not a 6-digit hex id'),
    ('subsystem_vendor', '0x10dex', 'not a 4-digit hex id'),
])
def test_an_id_of_the_wrong_shape(root, conf, caplog, name, value, reason):
    _write(_dev(root, T4, name), value + '\n')
    _discover_skipping(conf, caplog, T4, reason)
    [line] = _warnings(caplog, T4)
    assert '/%s ' % name in line, line


@pytest.mark.parametrize('value', [
    '99999999999999999999',  # would be that many attach handles
    '9' * 5000,  # more digits than int() takes
    '-1',
    '0x8',
    '8.0',
    '',
    'eight',
])
def test_available_instances_out_of_range(root, conf, caplog, value):
    _write(_type_file(root, T4, 'available_instances'), value + '\n')
    _discover_skipping(conf, caplog, T4,
                       'not a count from 0 to 1024|more than 4096 bytes')
    [line] = _warnings(caplog, T4)
    assert '/available_instances ' in line, line


@pytest.mark.parametrize('value', [
    'GRID\x1bT4-2B',  # a control character
    'GRID T4-' + 'Q' * 300,  # longer than a trait may be
    '\u00c9\u00c9\u00c9',  # nothing trait-safe left
])
def test_a_vgpu_type_name_that_makes_no_trait(root, conf, caplog, value):
    _write(_type_file(root, T4, 'name'), value + '\n')
    _discover_skipping(conf, caplog, T4, 'name')


def test_too_many_created_mdevs(root, conf, caplog):
    devices = _type_file(root, T4, 'devices')
    os.makedirs(devices)
    for n in range(2000):
        os.mkdir(os.path.join(devices, '%08x-0000-4000-8000-000000000000'
                              % n))
    _discover_skipping(conf, caplog, T4, 'mdev')


def test_entries_that_only_look_like_virtfns_are_not_followed(root, conf,
                                                              caplog):
    """``virtfnX`` is no VF link; the card is still reported."""
    os.symlink('..', _dev(root, T4, 'virtfnX'))
    caplog.set_level(logging.WARNING)
    assert _names(discover.discover(conf)) == ALL


# --- a device that goes away during the scan -----------------------------

class UnplugDuringScan(Sysfs):
    """A host where ``address`` is hot-unplugged at one point of the
    scan (``when``), as the kernel does while the agent reads."""

    def __init__(self, root, address, when):
        super().__init__(root)
        self.address = address
        self.when = when
        self.aside = None

    def _unplug(self):
        if self.aside is None:
            self.aside = sysfs_tree.unplug(self.root, self.address)

    def list_pci_addresses(self):
        addresses = super().list_pci_addresses()
        if self.when == 'after listing':
            self._unplug()
        return addresses

    def read(self, *parts):
        value = super().read(*parts)
        if self.address in parts and (
                (self.when == 'after vendor' and parts[-1] == 'vendor')
                or (self.when == 'in vgpu type'
                    and parts[-1] == 'available_instances')):
            self._unplug()
        return value


@pytest.mark.parametrize('when', ['after listing', 'after vendor',
                                  'in vgpu type'])
def test_a_device_unplugged_during_the_scan(root, conf, caplog, when):
    sysfs = UnplugDuringScan(root, T4, when)
    caplog.set_level(logging.WARNING)
    devices = discover.discover(conf, sysfs=sysfs)
    assert sysfs.aside is not None
    assert _names(devices) == _without(T4)
    [line] = _warnings(caplog, T4)
    assert _matches('no such file|gone|vanished|no vendor|no device',
                    line), line


def test_discovery_while_a_device_comes_and_goes(root, conf):
    """Another thread unplugs and replugs a T4 all the time: every pass
    succeeds, reports the other cards, and reports the T4 either whole
    or not at all."""
    intact = {dep.name: dep for d in discover.discover(conf)
              for dep in d.deployables}
    spare = '%s_%s' % (HOST, T4)
    stop = threading.Event()
    problems = []
    flaps = [0]

    def flap():
        try:
            while not stop.is_set():
                aside = sysfs_tree.unplug(root, T4)
                sysfs_tree.replug(root, T4, aside)
                flaps[0] += 1
        except Exception as exc:  # reported by the main thread
            problems.append(exc)

    thread = threading.Thread(target=flap)
    thread.start()
    seen = 0
    try:
        for _ in range(40):
            devices = discover.discover(conf)
            got = {dep.name: dep for d in devices for dep in d.deployables}
            assert sorted(set(got) - {spare}) == _without(T4)
            if spare in got:
                seen += 1
                assert got[spare] == intact[spare]
    finally:
        stop.set()
        thread.join()
    assert problems == []
    assert flaps[0] > 0
    # The T4 is back, whole, once the unplugging stops.
    assert _names(discover.discover(conf)) == ALL


# --- one broken card of each driver at once ------------------------------

def test_one_broken_card_of_each_driver_beside_good_ones(root, conf,
                                                         caplog):
    # The spare T4's driver is half-bound: no class file yet.
    os.remove(_dev(root, T4, 'class'))
    # The spare PAC's firmware wrote garbage for its PR interface id.
    fme = _dev(root, PAC, 'fpga/intel-fpga-dev.1/intel-fpga-fme.1/pr/'
                          'interface_id')
    _write(fme, b'\xff' * 64)
    # The spare U250's management PF loops; its user PF alone is no card.
    vendor = sysfs_tree.replace(_dev(root, U250, 'vendor'))
    os.symlink('vendor', vendor)
    caplog.set_level(logging.WARNING)
    devices = discover.discover(conf)
    assert _names(devices) == _without(T4, PAC, U250)
    for address, reason in ((T4, 'no class'), (PAC, 'utf-8'),
                            (U250, 'symbolic links')):
        [line] = _warnings(caplog, address)
        assert _matches(reason, line), line


def test_a_pac_virtfn_leading_outside_the_root(root, conf, caplog,
                                               tmp_path):
    """An Arria 10 whose VF link points outside the root is not
    reported; the other cards are."""
    vf = PAC[:-1] + '1'
    os.symlink(str(tmp_path / vf), _dev(root, PAC, 'virtfn0'))
    _discover_skipping(conf, caplog, PAC, 'outside')


def test_a_pac_whose_vf_is_broken(conf_factory, tmp_path, caplog):
    """With its VF on, a PAC's port (and AFU) is on the VF: a VF that
    cannot be read leaves the card out, with a line for each."""
    root = sysfs_tree.copy_tree('arria10_pac', tmp_path)
    pf, vf = '0000:5e:00.0', '0000:5e:00.1'
    os.remove(_dev(root, vf, 'vendor'))
    caplog.set_level(logging.WARNING)
    conf = conf_factory(None, CONFIG, sysfs_root=root)
    assert discover.discover(conf) == []
    [vf_line] = _warnings(caplog, vf + ':')
    assert 'no vendor' in vf_line
    [pf_line] = _warnings(caplog, pf + ':')
    assert 'its VF %s cannot be read' % vf in pf_line


def test_a_u250_whose_user_function_is_broken(root, conf, caplog):
    """A card is its two functions: with the user PF unreadable, the
    management PF alone is not reported as the card."""
    user = U250[:-1] + '1'
    _write(_dev(root, user, 'class'), b'\x00' * 8)
    caplog.set_level(logging.WARNING)
    assert _names(discover.discover(conf)) == _without(U250)
    [user_line] = _warnings(caplog, user + ':')
    assert 'hex id' in user_line
    [card_line] = _warnings(caplog, U250 + ':')
    assert 'its function %s cannot be read' % user in card_line


# --- writes stay inside the root too -------------------------------------

UUID = '0f6f8a4c-98f9-4d6c-8b5b-2f1de1c0ab12'


def test_mdev_writes_through_links_out_of_the_root(root, tmp_path):
    """A ``create`` or ``remove`` control file that is a link out of the
    root is not written."""
    outside = tmp_path / 'outside'
    outside.write_text('untouched')
    create = sysfs_tree.replace(_type_file(root, T4, 'create'))
    os.symlink(str(outside), create)
    sysfs = Sysfs(root)
    with pytest.raises(SysfsError, match='outside the sysfs root'):
        sysfs.create_mdev(T4, 'nvidia-223', UUID)
    bus = os.path.join(root, 'bus/mdev/devices', UUID)
    os.symlink(str(tmp_path), bus)
    (tmp_path / 'remove').write_text('untouched')
    with pytest.raises(SysfsError, match='outside the sysfs root'):
        sysfs.remove_mdev(UUID)
    assert outside.read_text() == 'untouched'
    assert (tmp_path / 'remove').read_text() == 'untouched'


def test_a_fifo_as_a_control_file_is_not_written(root):
    os.mkfifo(sysfs_tree.replace(_type_file(root, T4, 'create')))
    with pytest.raises(SysfsError, match='not a regular file'):
        Sysfs(root).create_mdev(T4, 'nvidia-223', UUID)


# --- a whole driver fails ------------------------------------------------

def test_an_unreadable_bus_fails_its_drivers_only(conf_factory, root,
                                                  caplog):
    devices_dir = sysfs_tree.replace(os.path.join(root, 'bus/pci/devices'))
    os.symlink('devices', devices_dir)
    conf = conf_factory(None, CONFIG, sysfs_root=root,
                        enabled_drivers=['nvidia_gpu', 'fake'])
    caplog.set_level(logging.WARNING)
    devices = discover.discover(conf)
    assert _names(devices) == ['%s_0000:0c:00.0' % HOST,
                               '%s_0000:0d:00.0' % HOST]
    [line] = [r.getMessage() for r in caplog.records
              if 'nvidia_gpu' in r.getMessage()]
    assert 'symbolic links' in line


class FirmwareHangsDriver(base.Driver):
    """A driver whose every scan fails, as a plugin's might."""

    name = 'hangs'

    def discover(self):
        raise RuntimeError('firmware did not answer')


def test_a_failing_driver_does_not_stop_the_others(conf_factory, root,
                                                   caplog):
    conf = conf_factory(None, CONFIG.replace(
        '[DEFAULT]\n', '[DEFAULT]\ntransport_url = %s\n'
        % local_transport.TRANSPORT_URL), sysfs_root=root)
    sysfs = Sysfs(root)
    drivers = [FirmwareHangsDriver(conf, sysfs),
               nvidia_gpu.NvidiaGPUDriver(conf, sysfs),
               fake.FakeDriver(conf, sysfs)]
    transport = rpc.get_transport(conf)
    try:
        service = agent_service.AgentService(conf, transport,
                                             hostname=HOST, sysfs=sysfs,
                                             drivers=drivers)
        caplog.set_level(logging.WARNING)
        names = _names(service.discover())
    finally:
        transport.cleanup()
    assert names == sorted(
        ['%s_%s' % (HOST, a) for a in ('0000:3b:00.0', '0000:af:00.0', T4,
                                       '0000:0c:00.0', '0000:0d:00.0')])
    assert any('hangs' in r.getMessage() and 'firmware did not answer'
               in r.getMessage() for r in caplog.records)


# --- cyborg-lite-agent --discover-only -----------------------------------

def _config_file(tmp_path):
    path = tmp_path / 'agent.conf'
    path.write_text(CONFIG)
    return str(path)


def test_discover_only_reports_the_good_devices(root, tmp_path, capsys,
                                                caplog):
    os.symlink('/dev/zero', sysfs_tree.replace(_dev(root, T4, 'vendor')))
    caplog.set_level(logging.WARNING)
    rc = agent_cmd.main(['--discover-only', '--config-file',
                         _config_file(tmp_path), '--sysfs-root', root])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(dep['name'] for dev in report['devices']
                  for dep in dev['deployables']) == _without(T4)
    assert len(_warnings(caplog, T4)) == 1


def test_discover_only_as_a_process_on_a_broken_host(root, tmp_path):
    sysfs_tree.sparse_file(_dev(root, T4, 'device'), HUGE, b'0x1eb8')
    os.remove(_dev(root, PAC, 'vendor'))
    result = subprocess.run(
        [sys.executable, '-m', 'cyborg_lite.cmd.agent', '--discover-only',
         '--config-file', _config_file(tmp_path), '--sysfs-root', root],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) < MAX_REPORT_BYTES
    report = json.loads(result.stdout)
    assert sorted(dep['name'] for dev in report['devices']
                  for dep in dev['deployables']) == _without(T4, PAC)
    assert 'Traceback' not in result.stderr
    for address in (T4, PAC):
        assert len([line for line in result.stderr.splitlines()
                    if address in line]) == 1, result.stderr


class FlakyDriver(base.Driver):
    """The fake driver, failing as a whole while ``failing`` is set."""

    name = 'flaky'
    failing = False

    def __init__(self, conf, sysfs):
        super().__init__(conf, sysfs)
        self._fake = fake.FakeDriver(conf, sysfs)

    def discover(self):
        if self.failing:
            raise RuntimeError('firmware did not answer')
        return self._fake.discover()


def test_a_failed_driver_reports_its_last_devices(conf_factory, root,
                                                  caplog):
    """A driver's bad moment does not delete its devices: the daemon
    reports what it found last time until it completes a pass again."""
    conf = conf_factory(None, CONFIG, sysfs_root=root)
    sysfs = Sysfs(root)
    flaky = FlakyDriver(conf, sysfs)
    drivers = [flaky, nvidia_gpu.NvidiaGPUDriver(conf, sysfs)]
    last_found = {}
    first = _names(discover.run_drivers(drivers, sysfs, last_found))
    flaky.failing = True
    caplog.set_level(logging.WARNING)
    assert _names(discover.run_drivers(drivers, sysfs, last_found)) == first
    assert any('flaky failed: reporting the 2 devices it found last time'
               in r.getMessage() for r in caplog.records)
    # Without a memory (--discover-only's single pass) it reports none.
    assert len(_names(discover.run_drivers(drivers, sysfs))) == \
        len(first) - 2


def test_a_device_read_badly_once_is_reported_as_last_read(conf_factory,
                                                           root):
    """A device its driver still lists but cannot read this time (a file
    of the wrong shape) is reported as it was read last time, not as
    gone; without a memory (--discover-only) it is left out."""
    conf = conf_factory(None, CONFIG, sysfs_root=root)
    sysfs = Sysfs(root)
    drivers = [nvidia_gpu.NvidiaGPUDriver(conf, sysfs)]
    last_found = {}
    first = discover.run_drivers(drivers, sysfs, last_found)
    assert any(T4 in name for name in _names(first))
    device = _dev(root, T4, 'device')
    with open(device, 'rb') as f:
        good = f.read()
    sysfs_tree.sparse_file(device, HUGE, b'0x1eb8')
    try:
        again = discover.run_drivers(drivers, sysfs, last_found)
        # The same devices (in another order: the digest sorts them).
        assert model.report_digest(again) == model.report_digest(first)
        assert sorted(_names(again)) == sorted(_names(first))
        assert T4 not in str(_names(discover.run_drivers(drivers, sysfs)))
    finally:
        os.remove(device)
        with open(device, 'wb') as f:
            f.write(good)
    assert model.report_digest(discover.run_drivers(
        drivers, sysfs, last_found)) == model.report_digest(first)
