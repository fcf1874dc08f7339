"""Device profile groups: validation and the ARQs they ask for.

Pure functions, used by the API (to validate a new profile) and by the
conductor (to count ARQs and find a bitstream).

A group is a dict of strings::

    {"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required",
     "accel:bitstream_id": "d5ca2f11-..."}
"""

import re

from cyborg_lite import exception

STANDARD_RESOURCE_CLASSES = frozenset(
    {'FPGA', 'GPU', 'VGPU', 'PGPU', 'CUSTOM_QAT', 'CUSTOM_NIC',
     'CUSTOM_SSD'})
TRAIT_VALUES = frozenset({'required', 'forbidden'})
XILINX_TRAIT = 'CUSTOM_FPGA_XILINX'
# Each matched whole (fullmatch): "$" would let a final newline through.
NAME_RE = re.compile(r'[a-zA-Z0-9-_]+')
_NAME_CHARS_RE = re.compile(r'[A-Z0-9_]+')
# Placement's custom names: CUSTOM_ and at least one more character.
_CUSTOM_RE = re.compile(r'CUSTOM_[A-Z0-9_]{1,248}')
# A bitstream is a file of the agents' [agent] bitstream_dir (upstream:
# a Glance image uuid): a name, never a path out of that directory.
BITSTREAM_ID_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9._-]{0,254}')
# The most ARQs one device profile may ask for (one per accelerator, two
# per Xilinx card). Each is a row made when Nova creates the instance's
# ARQs: an unbounded amount would let one request exhaust the conductor.
MAX_ARQS_PER_PROFILE = 128


def _invalid(reason):
    return exception.Invalid(reason=reason)


def _check_resource(name, value):
    if not (name in STANDARD_RESOURCE_CLASSES or name.startswith('CUSTOM_')):
        raise _invalid('Resource class %r is not one of %s and does not '
                       'start with CUSTOM_.' %
                       (name, ', '.join(sorted(STANDARD_RESOURCE_CLASSES))))
    if not _NAME_CHARS_RE.fullmatch(name) or (
            name.startswith('CUSTOM_') and not _CUSTOM_RE.fullmatch(name)):
        raise _invalid('Resource class %r may only contain A-Z, 0-9 and _, '
                       'and a custom one more than CUSTOM_.' % name)
    try:
        amount = int(value)
    except (TypeError, ValueError):
        raise _invalid('Resource amount %r of %s is not an integer.' %
                       (value, name))
    if amount < 1:
        raise _invalid('Resource amount of %s must be at least 1.' % name)


def _check_trait(name, value):
    if not _CUSTOM_RE.fullmatch(name):
        raise _invalid('Trait %r must start with CUSTOM_, be longer than '
                       'it and contain only A-Z, 0-9 and _.' % name)
    if value not in TRAIT_VALUES:
        raise _invalid('Trait %s must be "required" or "forbidden", not %r.'
                       % (name, value))


def normalize_group(group: dict) -> dict:
    """Validate one group; returns it with whitespace stripped from the
    resource class and trait names, as upstream rewrites them."""
    result = {}
    for key, value in group.items():
        prefix, sep, name = key.partition(':')
        if not sep or prefix not in ('resources', 'trait', 'accel'):
            raise _invalid('Group key %r must start with "resources:", '
                           '"trait:" or "accel:".' % key)
        name = name.strip()
        if prefix == 'resources':
            _check_resource(name, value)
        elif prefix == 'trait':
            _check_trait(name, value)
        elif not name:
            raise _invalid('Group key %r has an empty accel: name.' % key)
        elif name == 'bitstream_id' and not (
                isinstance(value, str) and BITSTREAM_ID_RE.fullmatch(value)):
            raise _invalid('accel:bitstream_id %r must be a file name of '
                           'letters, digits, ".", "-" and "_" (an image '
                           'uuid), not a path.' % (value,))
        result['%s:%s' % (prefix, name)] = value
    if not any(k.startswith('resources:') for k in result):
        raise _invalid('Each group needs at least one "resources:" key.')
    return result


def check_name(name: str) -> None:
    """A profile name is letters, digits, "-" and "_" only (a name with
    a final newline, which a "$" pattern lets through, could never be
    named in a URL again)."""
    if not NAME_RE.fullmatch(name):
        raise _invalid('Device profile name %r may only contain letters, '
                       'digits, "-" and "_".' % name[:64])


def normalize_groups(groups: list) -> list:
    if not groups:
        raise _invalid('A device profile needs at least one group.')
    groups = [normalize_group(g) for g in groups]
    if sum(arq_counts(groups)) > MAX_ARQS_PER_PROFILE:
        raise _invalid('A device profile may ask for at most %d '
                       'accelerators.' % MAX_ARQS_PER_PROFILE)
    return groups


def arq_count(group: dict) -> int:
    """ARQs one group asks for: the sum of its ``resources:*`` amounts,
    doubled for Xilinx cards, which attach their management and user
    functions as two handles."""
    count = sum(int(v) for k, v in group.items()
                if k.startswith('resources:'))
    if group.get('trait:' + XILINX_TRAIT) == 'required':
        count = 2 * int(group.get('resources:FPGA', count))
    return count


def arq_counts(groups: list) -> list[int]:
    return [arq_count(g) for g in groups]


def bitstream_id(group: dict) -> str | None:
    """The bitstream an FPGA bind must program, if any."""
    return group.get('accel:bitstream_id')
