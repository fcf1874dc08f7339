"""The agent's programmings: one at a time per device, shared by callers
who ask for the same bitstream at once.

The agent's RPC server runs its calls in threads; these tests call its
manager from threads the same way. The programming tool is a script set
as ``[agent] fpga_program_command`` (the hardware boundary): it refuses a
device that another run of it is programming, as real tools do, and
records each run.
"""

import os
import stat
import threading

import pytest

from cyborg_lite.agent import manager
from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.drivers import fake
from cyborg_lite import model

FPGA_A = '0000:5e:00.0'
FPGA_B = '0000:af:00.0'

# $1 the device's PCI address, $2 the bitstream's path. A run on a device
# that another run holds fails (exit 9). With "meet" in the bitstream's
# name it waits up to 5 s for a run on the other device to start: it
# fails (exit 8) unless the two devices are programmed at once.
SCRIPT = '''#!/bin/sh
dir="$(dirname "$0")"
mkdir "$dir/busy-$1" 2>/dev/null || { echo "device busy" >&2; exit 9; }
echo "$1 $(basename "$2")" >> "$dir/runs"
touch "$dir/started-$1"
case "$2" in
  *meet*)
    n=0
    while [ "$(ls "$dir" | grep -c '^started-')" -lt 2 ]; do
      n=$((n + 1)); [ $n -gt 100 ] && { rmdir "$dir/busy-$1"; exit 8; }
      sleep 0.05
    done;;
  *) sleep 0.5;;
esac
rmdir "$dir/busy-$1"
case "$2" in *fail*) echo "bad bitstream" >&2; exit 3;; esac
exit 0
'''


@pytest.fixture
def agent(conf_factory, tmp_path):
    script = tmp_path / 'program.sh'
    script.write_text(SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    conf = conf_factory(fpga_program_command=str(script),
                        fpga_program_timeout=30,
                        bitstream_dir=str(tmp_path / 'bitstreams'))
    driver = fake.FakeDriver(conf, None, devices=[
        {'type': 'FPGA', 'address': FPGA_A},
        {'type': 'FPGA', 'address': FPGA_B}])
    return manager.AgentManager(conf, None, [driver])


def _deployable(address):
    return {'name': 'compute1_' + address, 'driver_name': 'fake',
            'controlpath_info': model.canonical_json(
                model.pci_address_info(address))}


def _runs(tmp_path):
    path = tmp_path / 'runs'
    if not os.path.exists(path):
        return []
    return [tuple(line.split()) for line in path.read_text().splitlines()]


def _program_at_once(agent, calls):
    """Call ``agent.program`` from one thread per ``(address, bitstream)``,
    all released together; the outcome of each, in order: True or the
    exception raised."""
    outcomes = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def call(index, address, bitstream):
        start.wait()
        try:
            outcomes[index] = agent.program(None, _deployable(address),
                                            bitstream)
        except Exception as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=call, args=(i,) + c)
               for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
        assert not thread.is_alive()
    return outcomes


def test_one_run_serves_every_caller_of_the_same_bitstream(agent, tmp_path):
    outcomes = _program_at_once(agent, [(FPGA_A, 'nlb0.gbs')] * 4)
    assert outcomes == [True] * 4
    assert _runs(tmp_path) == [(FPGA_A, 'nlb0.gbs')]
    # A caller that comes once the run is over programs the device again:
    # anything may have loaded another bitstream since.
    assert agent.program(None, _deployable(FPGA_A), 'nlb0.gbs') is True
    assert _runs(tmp_path) == [(FPGA_A, 'nlb0.gbs')] * 2


def test_callers_of_a_failed_run_all_hear_of_its_failure(agent, tmp_path):
    outcomes = _program_at_once(agent, [(FPGA_A, 'fail.gbs')] * 3)
    assert all(isinstance(o, base.ProgramError) for o in outcomes), outcomes
    assert all('exit code 3: bad bitstream' in str(o) for o in outcomes)
    assert _runs(tmp_path) == [(FPGA_A, 'fail.gbs')]


def test_another_bitstream_waits_until_the_device_is_free(agent, tmp_path):
    """Without the agent's ordering the tool refuses the second run
    (exit 9, device busy)."""
    outcomes = _program_at_once(agent, [(FPGA_A, 'nlb0.gbs'),
                                        (FPGA_A, 'nlb3.gbs'),
                                        (FPGA_A, 'nlb0.gbs'),
                                        (FPGA_A, 'nlb3.gbs')])
    assert outcomes == [True] * 4
    runs = _runs(tmp_path)
    assert sorted(runs) == [(FPGA_A, 'nlb0.gbs'), (FPGA_A, 'nlb3.gbs')]


def test_two_devices_are_programmed_at_once(agent, tmp_path):
    outcomes = _program_at_once(agent, [(FPGA_A, 'meet.gbs'),
                                        (FPGA_B, 'meet.gbs')])
    assert outcomes == [True, True]
    assert sorted(_runs(tmp_path)) == [(FPGA_A, 'meet.gbs'),
                                       (FPGA_B, 'meet.gbs')]
