"""The benchmark's CPU accounting, on real processes."""

import os
import socket
import subprocess
import sys

import pytest

from benchmarks import cpu

CPU_SECONDS = 0.3
# Burns CPU_SECONDS of its own CPU once a line arrives on stdin, says
# done, then waits for stdin to close.
BURNER = '''
import sys, time
sys.stdin.readline()
start = time.process_time()
while time.process_time() - start < %s:
    pass
print('done', flush=True)
sys.stdin.read()
''' % CPU_SECONDS
# Once a line arrives, starts a burner as its child and makes it burn;
# then, with REAP true, ends the child and reaps it; says what the child
# said, then waits for stdin to close.
PARENT = '''
import subprocess, sys
REAP = %s
sys.stdin.readline()
child = subprocess.Popen([sys.executable, '-c', %r], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
child.stdin.write('go\\n')
child.stdin.flush()
said = child.stdout.readline().strip()
if REAP:
    child.stdin.close()
    child.wait()
print(said, flush=True)
sys.stdin.read()
if not REAP:
    child.stdin.close()
    child.wait()
'''


@pytest.fixture
def started():
    procs = []

    def start(code):
        proc = subprocess.Popen([sys.executable, '-c', code],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.stdin.close()
        proc.wait(timeout=30)


def _go(proc):
    proc.stdin.write('go\n')
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == 'done'


def test_a_group_is_charged_what_its_process_spent_in_the_window(started):
    busy, idle = started(BURNER), started(BURNER)
    meter = cpu.CpuMeter({'busy': ([busy.pid], False),
                          'idle': ([idle.pid], False)})
    meter.start()
    _go(busy)
    result = meter.stop()
    assert result['spent']['busy'] >= CPU_SECONDS
    # Both started before the window: their start-up is not its CPU.
    assert result['spent']['idle'] < CPU_SECONDS / 3
    assert result['seconds'] > 0


@pytest.mark.parametrize('reap', [False, True],
                         ids=['child alive at the end', 'child exited'])
def test_children_born_in_the_window_count_whole(started, reap):
    parent = started(PARENT % (reap, BURNER))
    tree = cpu.CpuMeter({'tree': ([parent.pid], True)})
    alone = cpu.CpuMeter({'parent': ([parent.pid], False)})
    tree.start()
    alone.start()
    _go(parent)
    assert tree.stop()['spent']['tree'] >= CPU_SECONDS
    assert alone.stop()['spent']['parent'] < CPU_SECONDS / 3


def test_a_vanished_process_is_skipped():
    meter = cpu.CpuMeter({'gone': ([2 ** 22 + 12345], True)})
    meter.start()
    assert meter.stop()['spent'] == {'gone': 0}


def test_per_lifecycle():
    result = {'seconds': 10.0, 'spent': {'api': 4.0, 'db': 1.0}}
    assert cpu.per_lifecycle(result, 500, cores=2) == {
        'api': 8.0, 'db': 2.0, 'total': 10.0, 'cores_busy_percent': 25.0}
    assert cpu.per_lifecycle(result, 0, cores=2)['total'] is None


def test_listener_pid_finds_this_process():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        sock.listen()
        assert cpu.listener_pid(sock.getsockname()[1]) == \
            os.getpid()
