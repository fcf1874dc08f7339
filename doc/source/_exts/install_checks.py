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
import shlex

from keystoneauth1 import loading as ks_loading
from sphinx.util import logging

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


def literal_blocks(text):
    """The literal blocks of a page (after a paragraph ending in
    ``::``), dedented."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].rstrip().endswith('::') and not \
                lines[i].lstrip().startswith('..'):
            # The paragraph's text: after a list item's marker.
            marker = re.match(r'^\s*(?:[-*+]|#\.|\d+\.)\s+', lines[i])
            indent = (marker.end() if marker else
                      len(lines[i]) - len(lines[i].lstrip()))
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or len(
                    lines[j]) - len(lines[j].lstrip()) > indent):
                body.append(lines[j])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            if body:
                least = min(len(b) - len(b.lstrip()) for b in body
                            if b.strip())
                blocks.append('\n'.join(b[least:] for b in body))
            i = j
        else:
            i += 1
    return blocks


def _commands(block):
    logical = ''
    for line in block.splitlines():
        if not logical and line.lstrip().startswith('#'):
            continue
        if line.rstrip().endswith('\\'):
            logical += line.rstrip()[:-1] + ' '
            continue
        logical += line
        if logical.strip():
            words = shlex.split(logical)
            while words and re.match(r'^[A-Z_][A-Z0-9_]*=', words[0]):
                words.pop(0)
            if words:
                yield words[0]
        logical = ''


SUDOERS = re.compile(r'^\S+ ALL = \(root\) NOPASSWD: (\S+) (.*)$')


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
    match = SUDOERS.match(block)
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
    for block in literal_blocks(text):
        if block.startswith('[['):
            continue  # devstack's local.conf: devstack reads it
        if SUDOERS.match(block):
            found += sudoers_problems(block)
            continue
        if block.startswith('['):
            section = None
            for line in block.splitlines():
                line = line.strip()
                if not line or line.startswith('#'):
                    continue
                match = re.match(r'^\[(.+)\]$', line)
                if match:
                    section = match.group(1)
                    continue
                option = line.partition('=')[0].strip()
                if option not in options.get(section, ()):
                    found.append('[%s] %s is no option of any service'
                                 % (section, option))
            continue
        for program in _commands(block):
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
