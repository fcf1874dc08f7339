"""Upstream Placement's own gabbi suite, run against placement_stub.

The YAML files are read from the installed ``openstack-placement``
package (``placement/tests/functional/gabbits``, pinned in
test-requirements.txt), never copied here, and run in-process by gabbi's
loader (``gabbi.driver.build_tests`` with ``intercept=`` and
``fixture_module=``) against placement_stub's WSGI app, with the
fixtures of ``.fixtures``. The tests placement_stub does not run are
listed, each with its reason, in ``skips.yaml`` beside this file;
gabbi's own ``skip`` marks them, so the tests after them still run.
Each file is one pytest test, which fails naming every YAML test of the
file that failed.

``tox -e placement-gabbits`` runs just this suite.
"""

import importlib.util
import os
import unittest

from gabbi import driver
import pytest
import yaml

from tests.functional.placement_gabbits import fixtures

SKIPS_FILE = os.path.join(os.path.dirname(__file__), 'skips.yaml')


def gabbits_dir():
    """The gabbi directory of the installed openstack-placement, or
    None."""
    spec = importlib.util.find_spec('placement')
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], 'tests',
                        'functional', 'gabbits')
    return path if os.path.isdir(path) else None


def load_skips(path=SKIPS_FILE):
    """``{(file stem, test name): reason}`` from the skip file."""
    with open(path) as f:
        entries = yaml.safe_load(f) or []
    skips = {}
    for entry in entries:
        key = (entry['file'], entry['test'])
        if key in skips or not entry.get('reason', '').strip():
            raise ValueError('skip entry %r is repeated or has no reason'
                             % (key,))
        skips[key] = entry['reason'].strip()
    return skips


def file_suites(path):
    """gabbi's suites, one per YAML file, with the skips applied."""
    tests = driver.build_tests(
        path, unittest.TestLoader(), intercept=fixtures.setup_app,
        test_loader_name=__name__, fixture_module=fixtures)
    skips = load_skips()
    unused = set(skips)
    for suite in tests:
        for test in suite:
            key = (test.test_base_name, test.test_data['name'])
            if key in skips:
                test.test_data = dict(test.test_data, skip=skips[key])
                unused.discard(key)
    if unused:
        raise ValueError('skips.yaml names tests that do not exist: %s'
                         % sorted(unused))
    return tests


def selected_files():
    """The file stems named in ``PLACEMENT_GABBITS`` (comma separated),
    to run only those files; empty runs them all."""
    names = os.environ.get('PLACEMENT_GABBITS', '')
    return {name.strip() for name in names.split(',') if name.strip()}


def test_gabbi_file(suite):
    """Every test of one YAML file, run by gabbi's own suite (which
    starts the file's fixtures first and stops them last): none may fail
    or err. Skipped tests are those of ``skips.yaml``."""
    result = unittest.TestResult()
    suite.run(result)
    problems = ['%s: %s' % (getattr(test, 'test_data', {}).get(
                                'name', test.id()),
                            ' '.join(trace.split())[-400:])
                for test, trace in result.failures + result.errors]
    assert not problems, '\n'.join(problems)
    assert result.testsRun == suite.countTestCases()


def pytest_generate_tests(metafunc):
    """Parametrise ``test_gabbi_file`` with one suite per YAML file.

    (gabbi's pytest plugin, which makes each YAML test a pytest item,
    takes every parametrised item of the session whose id holds a colon
    for one of its own, so it cannot run beside the rest of the suite.)
    """
    if metafunc.function is not test_gabbi_file:
        return
    path = gabbits_dir()
    if path is None:
        metafunc.parametrize('suite', [pytest.param(
            None, marks=pytest.mark.skip(
                reason='openstack-placement is not installed'))])
        return
    wanted = selected_files()
    suites = [suite for suite in file_suites(path)
              if getattr(suite, '_tests', None) and
              (not wanted or suite._tests[0].test_base_name in wanted)]
    metafunc.parametrize('suite', suites, ids=[
        suite._tests[0].test_base_name for suite in suites])
