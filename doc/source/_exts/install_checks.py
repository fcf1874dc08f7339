"""Sphinx extension: the install pages name only what exists.

For each page under ``install/``, the literal blocks are read as an
operator would copy them:

* an INI block (its first line a ``[section]``): every ``option =
  value`` must be an option that one of the services registers in that
  section (its own options, the libraries' that its configuration
  generator lists, and keystoneauth's where the section takes an
  ``auth_type``);
* a sudoers line (``user ALL = (root) NOPASSWD: command args``): the
  command must be an installed console script, and each privsep
  context its arguments name must exist;
* any other block: each command's program must be one of this
  project's console scripts, or a tool the page installs (gunicorn,
  pip, openstack...).

Each miss is a Sphinx warning, so that ``sphinx-build -W`` fails on an
option that was renamed or a command that was dropped.
"""

import configparser
import importlib
import importlib.metadata
import os
import re

from keystoneauth1 import loading as ks_loading
from sphinx.util import logging

import rst_blocks

LOG = logging.getLogger(__name__)
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..',
                                    '..'))
GENERATORS = ('etc/cyborg_lite/cyborg-lite-config-generator.conf',
              'etc/placement_stub/placement-stub-config-generator.conf',
              'etc/nova_shim/nova-shim-config-generator.conf')
# Programs the pages run that are not this project's console scripts.
TOOLS = frozenset({'gunicorn', 'pip', 'openstack', 'export', 'cd', 'git',
                   'sudo', 'systemctl', 'source', 'apt-get', 'bash',
                   'tools/install.sh', 'tools/test-setup.sh', 'eval'})


def _namespaces():
    found = set()
    for path in GENERATORS:
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        # namespace = ... repeats: read them by hand.
        found.update(re.findall(r'^namespace\s*=\s*(\S+)', text, re.M))
    return found


def known_options():
    """``{section: {option names}}`` over every service."""
    points = {ep.name: ep for ep in
              importlib.metadata.entry_points(group='oslo.config.opts')}
    options = {}
    for namespace in _namespaces():
        for group, opts in points[namespace].load()():
            name = getattr(group, 'name', group) or 'DEFAULT'
            for opt in opts:
                options.setdefault(name, set()).update(
                    [opt.dest, opt.name] + [d.name for d in opt.deprecated_opts
                                            if d.name])
    keystoneauth = {o.dest for o in
                    ks_loading.get_auth_plugin_conf_options('password')}
    keystoneauth.update(o.dest for o in ks_loading.get_session_conf_options())
    keystoneauth.update(o.dest for o in ks_loading.get_adapter_conf_options())
    keystoneauth.update(('auth_type', 'auth_section'))
    for names in options.values():
        if 'auth_type' in names:
            names.update(keystoneauth)
    return options


def console_scripts():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(ROOT, 'setup.cfg'))
    lines = parser['entry_points']['console_scripts'].splitlines()
    return {line.split('=')[0].strip() for line in lines if '=' in line}


def _alternatives(pattern):
    """The strings a regular expression of plain text, escaped dots and
    one ``(a|b)`` group matches."""
    pattern = pattern.replace('\\.', '.')
    group = re.search(r'\(([^()]*)\)', pattern)
    if group is None:
        return [pattern]
    return [pattern[:group.start()] + choice + pattern[group.end():]
            for choice in group.group(1).split('|')]


def sudoers_problems(block):
    """What a sudoers line of a page names that does not exist."""
    match = rst_blocks.SUDOERS.match(block)
    command, args = match.groups()
    found = []
    installed = {ep.name for ep in
                 importlib.metadata.entry_points(group='console_scripts')}
    if os.path.basename(command) not in installed:
        found.append('%s is no installed console script' % command)
    context = re.search(r'--privsep_context (\S+)', args)
    for pypath in _alternatives(context.group(1)) if context else ():
        module, _sep, name = pypath.rpartition('.')
        try:
            getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            found.append('%s is no privsep context' % pypath)
    return found


def problems(text, options, scripts):
    """What a page names that does not exist, in words."""
    found = []
    for block in rst_blocks.literal_blocks(text):
        if block.startswith('[['):
            continue  # devstack's local.conf: devstack reads it
        if rst_blocks.is_sudoers(block):
            found += sudoers_problems(block)
        elif rst_blocks.is_ini(block):
            try:
                values = rst_blocks.ini_values(block)
            except ValueError as exc:
                found.append(str(exc))
                continue
            found += ['[%s] %s is no option of any service'
                      % (section, option)
                      for section, option in values
                      if option not in options.get(section, ())]
        else:
            found += _command_problems(block, scripts)
    return found


def _command_problems(block, scripts):
    found = []
    for _env, words in rst_blocks.commands(block):
        program = words[0]
        if '://' in program:
            continue  # a URL shown as it is written, not a command
        name = program.removeprefix('.venv/bin/')
        if name not in scripts and name not in TOOLS:
            found.append('%s is no console script of this project'
                         % program)
    return found


def _check(app, docname, source):
    if not docname.startswith('install/'):
        return
    env = app.env
    if not hasattr(env, 'install_checks'):
        env.install_checks = (known_options(), console_scripts())
    options, scripts = env.install_checks
    for problem in problems(source[0], options, scripts):
        LOG.warning('%s: %s', docname, problem, location=docname)


def setup(app):
    app.connect('source-read', _check)
    return {'parallel_read_safe': True, 'version': '1'}
