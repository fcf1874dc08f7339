"""Upstream Placement's own gabbi suite, run against placement_stub.

The YAML files are read from the installed ``openstack-placement``
package (``placement/tests/functional/gabbits``, pinned in
test-requirements.txt), never copied here, and run in-process by gabbi's
loader (``gabbi.driver.build_tests`` with ``intercept=`` and
``fixture_module=``) against placement_stub's WSGI app, with the
fixtures of :mod:`.fixtures`. The tests placement_stub does not run are
listed, each with its reason, in ``skips.yaml`` beside this file;
gabbi's own ``skip`` marks them, so the tests after them still run.

``tox -e placement-gabbits`` runs just this suite.
"""

import importlib.util
import os
import unittest

from gabbi import driver
from gabbi import reporter
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


def test_gabbi(test, result):
    """One gabbi test (parametrised below)."""
    if result:
        test(result)
    else:
        test()


def pytest_generate_tests(metafunc):
    """Parametrise :func:`test_gabbi` with every test of every file, as
    ``gabbi.driver.py_test_generator`` does; gabbi's pytest plugin
    starts a file's fixtures before its first test and stops them after
    its last."""
    if metafunc.function is not test_gabbi:
        return
    path = gabbits_dir()
    if path is None:
        metafunc.parametrize('test, result', [pytest.param(
            None, None, marks=pytest.mark.skip(
                reason='openstack-placement is not installed'))])
        return
    metafunc.config.pluginmanager.import_plugin('gabbi.pytester')
    result = reporter.PyTestResult()
    ids, params = [], []
    wanted = selected_files()
    for suite in file_suites(path):
        if not getattr(suite, '_tests', None):
            continue
        if wanted and suite._tests[0].test_base_name not in wanted:
            continue
        name = '%s:%s' % (__name__, suite._tests[0].__class__.__name__)
        ids.append('start_' + name)
        params.append((suite.start, result))
        for test in suite:
            ids.append('%s:%s' % (__name__, test.__class__.__name__))
            params.append((test, result))
        ids.append('stop_' + name)
        params.append((suite.stop, None))
    metafunc.parametrize('test, result', params, ids=ids)
