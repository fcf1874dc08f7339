"""Run the reliability tests and print their results as a table.

::

    python -m tests.functional.reliability.report            # all tests
    python -m tests.functional.reliability.report --rst doc/reliability.rst
    python -m tests.functional.reliability.report -- -k outage

It runs pytest on ``tests/functional/reliability`` (the soak included)
with ``CYBORG_LITE_RELIABILITY_RESULTS`` set, so that the suite's results
hook writes what each test did, then prints one row per test: the fault
injected, requests sent, errors (answers that were neither expected nor a
clean 503 within the time limit), data lost (ARQs missing or stuck,
handles leaked, events missing) and the outcome. ``--rst`` also writes
the table into that file (``doc/reliability.rst``). The tests start a
RabbitMQ and a PostgreSQL of their own, on their own ports.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
COLUMNS = ('Test', 'Fault injected', 'Requests', 'Errors', 'Data lost',
           'Result', 'Seconds')


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
        'doc/reliability.rst',
        '',
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
    return '\n'.join(lines) + '\n'


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
        with open(args.rst, 'w') as f:
            f.write(rst(table, records, elapsed))
    return code


if __name__ == '__main__':
    sys.exit(main())
