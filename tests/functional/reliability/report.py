"""Run the reliability tests and print their results as a table.

::

    python -m tests.functional.reliability.report            # all tests
    python -m tests.functional.reliability.report \
        --rst doc/source/admin/reliability-report.rst
    python -m tests.functional.reliability.report -- -k outage

It runs pytest on ``tests/functional/reliability`` (the soak included)
with ``CYBORG_LITE_RELIABILITY_RESULTS`` set, so that the suite's results
hook writes what each test did, then prints one row per test: the fault
injected, requests sent, errors (answers that were neither expected nor a
clean 503 within the time limit), data lost (ARQs missing or stuck,
handles leaked, events missing) and the outcome. ``--rst`` also writes
the table into that file (``doc/source/admin/reliability-report.rst``).
The tests start a RabbitMQ and a PostgreSQL of their own, on their own ports.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time

from cyborg_lite import rpc
from cyborg_lite import states
from cyborg_lite.conductor import retries
from cyborg_lite.conf import api as api_conf
from tests.functional.reliability import harness

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLUMNS = ('Test', 'Fault injected', 'Requests', 'Max wait (s)', 'Errors',
           'Data lost', 'Result', 'Seconds')


def run_tests(pytest_args):
    fd, path = tempfile.mkstemp(suffix='.json')
    os.close(fd)
    env = dict(os.environ, CYBORG_LITE_RELIABILITY_RESULTS=path,
               CYBORG_LITE_RELIABILITY='1')
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, '-m', 'pytest', '-c', os.path.join(ROOT, 'tox.ini'),
         '-p', 'no:cacheprovider', '-q', HERE] + pytest_args,
        cwd=ROOT, env=env)
    elapsed = time.monotonic() - started
    try:
        with open(path) as f:
            records = json.load(f)
    except (OSError, ValueError):
        records = {}
    finally:
        os.unlink(path)
    return proc.returncode, records, elapsed


def rows(records):
    out = []
    for nodeid, r in sorted(records.items()):
        name = nodeid.split('::')[-1]
        out.append((name, r.get('fault', ''), str(r.get('requests', '')),
                    str(r.get('max_wait', '')),
                    str(r.get('errors', '')), str(r.get('lost', '')),
                    r.get('outcome', 'not run'), str(r.get('seconds', ''))))
    return out


def text_table(table):
    widths = [min(60, max(len(c), *(len(row[i]) for row in table)))
              for i, c in enumerate(COLUMNS)] if table else \
        [len(c) for c in COLUMNS]

    def line(cells):
        return ' | '.join(cell[:w].ljust(w)
                          for cell, w in zip(cells, widths, strict=True))
    sep = '-+-'.join('-' * w for w in widths)
    return '\n'.join([line(COLUMNS), sep] + [line(row) for row in table])


def rst(table, records, elapsed):
    lines = [
        'Reliability',
        '===========',
        '',
        'Faults injected into the real processes of the production '
        'topology',
        '(gunicorn and built-in API, two conductors, three agents, the '
        'placement',
        'stub, nova-shim-compute, RabbitMQ and PostgreSQL of their own), '
        'by',
        '``tests/functional/reliability``. Regenerate this page with::',
        '',
        '    python -m tests.functional.reliability.report --rst '
        'doc/source/admin/reliability-report.rst',
        '',
        '*Max wait* is the longest any HTTP call of the test waited for '
        'its answer.',
        '*Errors* are answers that were neither expected nor a 503 with '
        'the error',
        'envelope in time; *data lost* counts ARQs missing, stuck or '
        'half-written,',
        'attach handles leaked and Nova events missing. For the agent '
        'tests,',
        '*requests* counts the checks of the DB and Placement made.',
        '',
        'Latest run: %s, Python %s, %d CPUs, %.0f s in all.' % (
            datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d'),
            platform.python_version(), os.cpu_count(), elapsed),
        '',
        '.. list-table::',
        '   :header-rows: 1',
        '',
    ]
    for row in [COLUMNS] + table:
        lines.append('   * - %s' % row[0])
        lines.extend('     - %s' % cell for cell in row[1:])
    lines += ['', 'Notes', '-----', '']
    for nodeid, r in sorted(records.items()):
        if r.get('notes'):
            lines.append('- ``%s``: %s.' % (nodeid.split('::')[-1],
                                            r['notes']))
        if r.get('rss_mib'):
            lines.append('')
            lines.append('  Resident memory (MiB), mean of the middle '
                         'third of the samples -> mean of the last third:')
            lines.append('')
            for name, (middle, last) in sorted(r['rss_mib'].items()):
                lines.append('  - %s: %s -> %s' % (name, middle, last))
            lines.append('')
    lines += faults_in_flight(records)
    return '\n'.join(lines) + '\n'


# The tests of faults that strike calls in flight, and what each fault
# may cost a caller (seconds).
IN_FLIGHT = (
    ('test_conductor_killed_mid_call', 'a conductor killed mid-call',
     harness.CONDUCTOR_FAULT_BOUND),
    ('test_broker_restarted_under_load', 'RabbitMQ restarted',
     harness.BROKER_FAULT_BOUND),
)
# The same tests with calls bounded by [api] rpc_timeout alone, without
# call monitoring and repeats (measured on the 2-core machine).
WITHOUT_MONITORING = (
    'a conductor killed mid-call: max wait 30.1 s, 10 errors, 5 of 618 '
    'lifecycles failed; RabbitMQ restarted: max wait 30.1 s, 37 of 682 '
    'lifecycles failed, full rate again 32.9 s after the new node '
    'listened')


def faults_in_flight(records):
    """The section on calls in flight when a conductor or the broker
    fails: the figures of test_faults_in_flight and how they come
    about."""
    by_name = {nodeid.split('::')[-1]: r for nodeid, r in records.items()}
    lines = ['', 'Faults in flight', '----------------', '']
    lines += _wrap(
        'No request is stranded by a fault. With two conductors, killing '
        'one in the middle of calls costs no caller more than %.0f s, and '
        'a call that is safe to repeat is answered by the other '
        'conductor; a RabbitMQ restart costs no caller more than %.0f s. '
        '``test_faults_in_flight`` checks it under load: 8 clients run '
        "Nova's ARQ lifecycle through both API servers, with ``[api] "
        'rpc_timeout`` at its default of 30 s.' % (
            harness.CONDUCTOR_FAULT_BOUND, harness.BROKER_FAULT_BOUND))
    lines += ['', '.. list-table::', '   :header-rows: 1', '',
              '   * - Fault', '     - Bound (s)', '     - Requests',
              '     - Max wait (s)', '     - Errors', '     - Data lost',
              '     - Result']
    for name, fault, bound in IN_FLIGHT:
        r = by_name.get(name, {})
        lines += ['   * - %s' % fault, '     - %.0f' % bound] + [
            '     - %s' % r.get(key, 'not run') for key in (
                'requests', 'max_wait', 'errors', 'lost', 'outcome')]
    lines.append('')
    lines += _wrap('Without call monitoring and repeats (calls bounded by '
                   '``rpc_timeout`` alone) the same tests measured: %s.'
                   % WITHOUT_MONITORING)
    lines += ['', 'How:', '']
    lines += _wrap(
        'A call lost with its conductor or the broker is known within '
        '``[api] rpc_call_monitor_timeout`` (%d s). A call that may wait '
        "on an agent or Placement is sent with oslo.messaging's "
        '``call_monitor_timeout``: its conductor sends a heartbeat every '
        'half of it while it works, so a long call (a vGPU bind waiting '
        'for its agent) keeps all of ``rpc_timeout``. '
        'Database-only calls, answered in milliseconds, go without '
        'heartbeats (each costs the conductor a thread, about 0.2 ms of '
        'CPU and latency per message) and are lost when unanswered after '
        'the same time.' % api_conf.default('rpc_call_monitor_timeout'),
        bullet=True)
    lines += _wrap(
        'A lost call that is safe to repeat is sent again (the '
        'conductors share one queue, so the survivor takes it); others '
        'answer 503 at once. A call that could not be sent because the '
        'broker is away is sent again every %.1f s, whatever its method. '
        'Repeats stop when an answer could no longer come within '
        '``[api] rpc_fault_timeout`` (%d s) of the fault.' % (
            retries.UNDELIVERED_PAUSE,
            api_conf.default('rpc_fault_timeout')), bullet=True)
    lines += _wrap(
        "An FPGA's programming through the API is started on a conductor, "
        'which programs in a thread and beats once a second, and read '
        'until it ends, so it may last as long as the agent lets its tool '
        'run; its conductor is taken for lost when its beats stop for %d '
        's, and a request that no conductor answered is given up by '
        'writing it first, so that none programs it later '
        '(cyborg_lite.db.programs).' % max(
            api_conf.default('rpc_call_monitor_timeout'),
            3 * states.PROGRAM_BEAT_INTERVAL), bullet=True)
    lines += _wrap(
        'RabbitMQ is reconnected every second (oslo.messaging backs off '
        'to 30 s between tries by default): %s.' % ', '.join(
            '``%s = %s``' % item
            for item in sorted(rpc.RABBIT_DEFAULTS.items())), bullet=True)
    lines += ['', 'Sent again when lost, and why that is safe:', '']
    for item in sorted(retries.RETRIED.items()):
        lines += _wrap('``%s``: %s.' % item, bullet=True)
    lines += ['', 'Answered 503 when lost:', '']
    for item in sorted(retries.NOT_RETRIED.items()):
        lines += _wrap('``%s``: %s.' % item, bullet=True)
    return lines


def _wrap(text, bullet=False):
    if bullet:
        return textwrap.wrap(text, 76, initial_indent='- ',
                             subsequent_indent='  ', break_long_words=False,
                             break_on_hyphens=False)
    return textwrap.wrap(text, 76, break_long_words=False,
                         break_on_hyphens=False)


# The part of the page from this heading on is written by hand (the
# hostile input figures); a new run keeps it.
KEPT_HEADING = 'Hostile callers and hosts'


def _kept_part(path):
    """The hand-written end of ``path``, from ``KEPT_HEADING``."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ''
    at = text.find('\n%s\n' % KEPT_HEADING)
    return text[at:] if at >= 0 else ''


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rst', help='also write the table to this file')
    parser.add_argument('pytest_args', nargs='*',
                        help='more pytest arguments (after --)')
    args = parser.parse_args(argv)
    code, records, elapsed = run_tests(args.pytest_args)
    table = rows(records)
    print()
    print(text_table(table))
    for nodeid, r in sorted(records.items()):
        if r.get('notes'):
            print('  %s: %s' % (nodeid.split('::')[-1], r['notes']))
    if args.rst:
        kept = _kept_part(args.rst)
        with open(args.rst, 'w') as f:
            f.write(rst(table, records, elapsed) + kept)
    return code


if __name__ == '__main__':
    sys.exit(main())
