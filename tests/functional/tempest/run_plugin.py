"""Runs cyborg-tempest-plugin's API tests and writes each one's outcome.

This file runs under the tempest virtualenv's interpreter
(``.venv-tempest``), never in the project's: it imports only the standard
library, tempest and the plugin. Usage::

    python run_plugin.py list            # print the test ids, one a line
    python run_plugin.py run OUT.json    # run them; OUT.json maps each id
                                         # to {"outcome", "detail"}

``TEMPEST_CONFIG_DIR`` and ``TEMPEST_CONFIG`` name the tempest.conf.
"""

import json
import sys
import unittest

PACKAGE = 'cyborg_tempest_plugin.tests.api'


def _suite():
    import cyborg_tempest_plugin.tests.api as api
    loader = unittest.TestLoader()
    return loader.discover(api.__path__[0],
                           top_level_dir=api.__path__[0].rsplit(
                               '/cyborg_tempest_plugin', 1)[0])


def _ids(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _ids(item)
        else:
            yield _plain_id(item.id())


def _plain_id(test_id):
    """``module.Class.test_name`` without tempest's ``[attrs]`` suffix."""
    return test_id.split('[', 1)[0]


class RecordingResult(unittest.TextTestResult):
    """Remembers every test's outcome, keyed by its plain id."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def _record(self, test, outcome, detail=''):
        self.outcomes[_plain_id(test.id())] = {'outcome': outcome,
                                               'detail': detail}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, 'passed')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, 'failed', self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        # A class fixture that fails reports as "setUpClass (module.Class)".
        self._record(test, 'error', self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, 'skipped', reason)


def main(argv):
    suite = _suite()
    if argv[1] == 'list':
        print('\n'.join(sorted(_ids(suite))))
        return 0
    runner = unittest.TextTestRunner(resultclass=RecordingResult,
                                     verbosity=2, stream=sys.stderr)
    result = runner.run(suite)
    with open(argv[2], 'w') as f:
        json.dump(result.outcomes, f, indent=1, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
