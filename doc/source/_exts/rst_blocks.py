"""The literal blocks of an install page, read as an operator copies
them: INI files, shell commands and sudoers lines.

The docs build checks them (``install_checks``), and the test that runs
the production guide as written
(``tests/functional/multiprocess/test_install_production.py``) reads
them with these same functions. Nothing here imports Sphinx.
"""

import re
import shlex

# A sudoers line: ``user ALL = (root) NOPASSWD: command args``.
SUDOERS = re.compile(r'^\S+ ALL = \(root\) NOPASSWD: (\S+) (.*)$')
_ENV_ASSIGNMENT = re.compile(r'^[A-Z_][A-Z0-9_]*=')


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


def is_ini(block):
    """An INI file's block: its first line a ``[section]`` (devstack's
    ``[[local|localrc]]`` is not one)."""
    return block.startswith('[') and not block.startswith('[[')


def is_sudoers(block):
    return SUDOERS.match(block) is not None


def commands(block):
    """The shell commands of a block: ``(environment, argv)`` each,
    backslash continuations joined, comment lines skipped."""
    found = []
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
            env = {}
            while words and _ENV_ASSIGNMENT.match(words[0]):
                name, _sep, value = words.pop(0).partition('=')
                env[name] = value
            if words:
                found.append((env, words))
        logical = ''
    return found


def ini_values(block):
    """``{(section, option): value}`` of an INI block, as oslo.config
    reads it: the rest of the line is the value. ValueError for a line
    that is neither a section, an option nor a comment."""
    values = {}
    section = None
    for line in block.splitlines():
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        match = re.match(r'^\[(.+)\]$', line)
        if match:
            section = match.group(1)
            continue
        key, sep, value = line.partition('=')
        if not sep:
            raise ValueError('not an option line: %r' % line)
        values[(section, key.strip())] = value.strip()
    return values
