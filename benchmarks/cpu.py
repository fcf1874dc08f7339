"""Where the CPU of a benchmark window goes, process by process.

On a machine with few cores the throughput of the lifecycle is bounded
by the CPU that one lifecycle costs, all processes together: the API
workers, the conductors and the agent, but also the broker, the database
server and the benchmark's own HTTP client, which share the same cores.
``CpuMeter`` reads the CPU time (user and system) of named groups
of processes at the start and at the end of a window, so that a run can
say how many milliseconds of CPU each group spent per lifecycle.

A group's processes are listed when the window opens and again when it
closes (``children=True`` adds the children of each, as a database
server's backends). A process born in the window counts all its CPU. A
child that exited in it counts through its parent, which reaped it and
so holds its CPU in its children times; a process of a group without
children that exited in the window is not counted.
"""

import os
import time

import psutil


def listener_pid(port):
    """The PID of the process listening on TCP ``port`` of this machine,
    or None (not listening, or owned by another user and this process
    may not see it)."""
    try:
        connections = psutil.net_connections(kind='tcp')
    except psutil.Error:
        return None
    for conn in connections:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and \
                conn.laddr.port == port and conn.pid:
            return conn.pid
    return None


class CpuMeter:
    """CPU seconds spent by groups of processes between ``start``
    and ``stop``.

    ``groups`` maps a name to ``(pids, children)``: the PIDs of the
    group, and whether their children (at start and at stop) belong to
    it too.
    """

    def __init__(self, groups):
        self.groups = groups
        self._before = None
        self._started = None
        self.result = None

    def _processes(self, pids, children):
        procs = {}
        for pid in pids:
            try:
                proc = psutil.Process(pid)
                procs[pid] = proc
                if children:
                    for child in proc.children(recursive=True):
                        procs[child.pid] = child
            except psutil.Error:
                continue
        return procs

    def _sample(self):
        """``{group: (live, reaped)}``: the CPU seconds of each live
        process, and of the children each listed parent has reaped."""
        sample = {}
        for name, (pids, children) in self.groups.items():
            live, reaped = {}, {}
            for pid, proc in self._processes(pids, children).items():
                try:
                    key = (pid, proc.create_time())
                    times = proc.cpu_times()
                except psutil.Error:
                    continue
                live[key] = times.user + times.system
                if children and pid in pids:
                    reaped[key] = times.children_user + \
                        times.children_system
            sample[name] = (live, reaped)
        return sample

    def start(self):
        self._before = self._sample()
        self._started = time.monotonic()

    def stop(self):
        """Close the window: ``{"seconds", "spent": {group: cpu s}}``.

        A child that exited in the window (a database backend of a
        connection closed meanwhile) is no longer among the live
        processes; its parent reaped it, which added its whole CPU to
        the parent's children times. The group is charged that, less
        what the child had spent before the window.
        """
        after = self._sample()
        seconds = time.monotonic() - self._started
        spent = {}
        for name, (live, reaped) in after.items():
            pids, children = self.groups[name]
            # Whose exited children a parent's children times hold.
            parents = set(pids) if children else set()
            live_before, reaped_before = self._before.get(name, ({}, {}))
            total = sum(value - live_before.get(key, 0.0)
                        for key, value in live.items())
            total += sum(value - reaped_before.get(key, 0.0)
                         for key, value in reaped.items())
            total -= sum(value for key, value in live_before.items()
                         if key not in live and key[0] not in parents)
            spent[name] = total
        self.result = {'seconds': seconds, 'spent': spent}
        return self.result


def per_lifecycle(result, lifecycles, cores=None):
    """Milliseconds of CPU per lifecycle of each group, their total, and
    how busy the machine's cores were over the window."""
    cores = cores or os.cpu_count()
    spent = result['spent']
    total = sum(spent.values())
    report = {name: round(1000 * value / lifecycles, 2) if lifecycles
              else None for name, value in spent.items()}
    report['total'] = round(1000 * total / lifecycles, 2) \
        if lifecycles else None
    report['cores_busy_percent'] = round(
        100 * total / (result['seconds'] * cores), 1)
    return report
