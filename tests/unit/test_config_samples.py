"""The checked-in config and policy samples match what the generators
write today (``tox -e genconfig`` / ``tox -e genpolicy`` regenerate them).

Library options (oslo.db, oslo.messaging, keystonemiddleware, ...) carry
their own help texts, which change between releases: the comparison is
exact when the installed libraries are the versions that
``constraints.txt`` pins, and is skipped, naming the difference, when they
are not.
"""

import configparser
import os
import re
import subprocess
import sys
from importlib import metadata

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CONFIG_GENERATORS = [
    'etc/cyborg_lite/cyborg-lite-config-generator.conf',
    'etc/placement_stub/placement-stub-config-generator.conf',
    'etc/nova_shim/nova-shim-config-generator.conf',
]
POLICY_GENERATORS = [
    'etc/cyborg_lite/cyborg-lite-policy-generator.conf',
    'etc/placement_stub/placement-stub-policy-generator.conf',
    'etc/nova_shim/nova-shim-policy-generator.conf',
]
# Libraries whose options or formatting end up in a sample.
LIBRARIES = ('oslo.config', 'oslo.db', 'oslo.log', 'oslo.messaging',
             'oslo.policy', 'oslo.middleware', 'keystonemiddleware',
             'keystoneauth1')


def _pins():
    pins = {}
    with open(os.path.join(ROOT, 'constraints.txt')) as f:
        for line in f:
            m = re.match(r'^([A-Za-z0-9_.\-]+)===?([^\s;#]+)', line.strip())
            if m:
                pins[m.group(1).lower()] = m.group(2)
    return pins


def _skip_unless_pinned_versions():
    pins = _pins()
    differ = []
    for lib in LIBRARIES:
        pinned = pins.get(lib.lower())
        installed = metadata.version(lib)
        if pinned and pinned != installed:
            differ.append('%s %s (pinned %s)' % (lib, installed, pinned))
    if differ:
        pytest.skip('installed libraries differ from constraints.txt: %s'
                    % ', '.join(differ))


def _output_file(generator_conf):
    parser = configparser.ConfigParser(strict=False)
    parser.read(os.path.join(ROOT, generator_conf))
    return parser['DEFAULT']['output_file']


def _generate(code, generator_conf, output):
    subprocess.run(
        [sys.executable, '-c', code, '--config-file', generator_conf,
         '--output-file', output],
        cwd=ROOT, check=True, capture_output=True)


def _compare(generator_conf, generated):
    with open(os.path.join(ROOT, _output_file(generator_conf))) as f:
        checked_in = f.read()
    with open(generated) as f:
        fresh = f.read()
    assert fresh == checked_in, (
        '%s is stale: regenerate it with tox -e genconfig / genpolicy'
        % _output_file(generator_conf))


@pytest.mark.parametrize('generator_conf', CONFIG_GENERATORS)
def test_config_sample_is_current(generator_conf, tmp_path):
    _skip_unless_pinned_versions()
    out = str(tmp_path / 'sample.conf')
    _generate('import sys; from oslo_config import generator; '
              'sys.exit(generator.main(sys.argv[1:]))', generator_conf, out)
    _compare(generator_conf, out)


@pytest.mark.parametrize('generator_conf', POLICY_GENERATORS)
def test_policy_sample_is_current(generator_conf, tmp_path):
    _skip_unless_pinned_versions()
    out = str(tmp_path / 'policy.yaml')
    _generate('import sys; from oslo_policy import generator; '
              'generator.generate_sample(sys.argv[1:])', generator_conf,
              out)
    _compare(generator_conf, out)


@pytest.mark.parametrize('namespace', ['cyborg_lite', 'placement_stub'])
def test_oslopolicy_tools_read_the_policy_file_they_are_given(namespace,
                                                             tmp_path):
    """``oslopolicy-validator`` (and the other tools that load the
    ``oslo.policy.enforcer`` entry point) checks the policy file that
    its ``--config-file`` names."""
    policy_file = tmp_path / 'policy.yaml'
    conf_file = tmp_path / 'service.conf'
    conf_file.write_text('[oslo_policy]\npolicy_file = %s\n' % policy_file)
    validator = os.path.join(os.path.dirname(sys.executable),
                             'oslopolicy-validator')
    command = [validator, '--namespace', namespace, '--config-file',
               str(conf_file)]
    policy_file.write_text('"admin_api": "role:admin"\n')
    good = subprocess.run(command, capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    policy_file.write_text('"no:such:rule": "role:admin"\n')
    bad = subprocess.run(command, capture_output=True, text=True)
    assert bad.returncode == 1, bad.stderr
    assert 'Unknown rule found in policy file: no:such:rule' in (
        bad.stdout + bad.stderr)
