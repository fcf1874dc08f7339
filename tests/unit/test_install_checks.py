"""The guide's build fails when an install page names an option or a
command that does not exist (doc/source/_exts/install_checks.py)."""

import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'doc', 'source', '_exts'))
install_checks = pytest.importorskip('install_checks')

PAGE = """
A config file::

    [api]
    auth_strategy = keystone
    no_such_option = 1
    [keystone_authtoken]
    auth_type = password
    username = cyborg

Then run::

    cyborg-lite-dbsync --config-file c.conf upgrade
    cyborg-lite-frobnicate --now
    CYBORG_LITE_CONFIG_FILES=c.conf \\
      gunicorn cyborg_lite.api.wsgi:application
"""


@pytest.fixture(scope='module')
def known():
    return install_checks.known_options(), install_checks.console_scripts()


def test_unknown_options_and_commands_are_named(known):
    assert install_checks.problems(PAGE, *known) == [
        '[api] no_such_option is no option of any service',
        'cyborg-lite-frobnicate is no console script of this project']


def test_the_install_pages_name_only_what_exists(known):
    pages = os.path.join(ROOT, 'doc', 'source', 'install')
    for name in sorted(os.listdir(pages)):
        with open(os.path.join(pages, name)) as f:
            assert install_checks.problems(f.read(), *known) == [], name


SUDOERS_LINE = ('cyborg ALL = (root) NOPASSWD: /opt/x/bin/%s ^--config-file '
                '/etc/a\\.conf --privsep_context cyborg_lite\\.privsep\\.'
                '(sysfs|gpu)_admin --privsep_sock_path /tmp/x$')
SUDOERS_PAGE = """
Let the agent's user run the helper::

    %s

and one that names no installed helper::

    %s
""" % (SUDOERS_LINE % 'privsep-helper', SUDOERS_LINE % 'privsep-helpr')


def test_a_sudoers_line_names_a_helper_and_contexts_that_exist(known):
    assert install_checks.problems(SUDOERS_PAGE, *known) == [
        'cyborg_lite.privsep.gpu_admin is no privsep context',
        '/opt/x/bin/privsep-helpr is no installed console script',
        'cyborg_lite.privsep.gpu_admin is no privsep context']
