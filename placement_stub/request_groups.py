"""Parsing of request groups and filters from query strings.

Shared by GET /resource_providers and GET /allocation_candidates. Pure
functions: they raise ``QueryError`` (a 400) and never touch the DB.
"""

import dataclasses
import re

from placement_stub import microversion as mv
from placement_stub.schemas import common

RESOURCE_RE = re.compile(r'^[A-Z0-9_]+$')
NUMERIC_SUFFIX_RE = re.compile(r'^[1-9][0-9]*$')
STRING_SUFFIX_RE = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')
GROUP_PARAMS = ('resources', 'required', 'member_of', 'in_tree')


class QueryError(ValueError):
    """A malformed query parameter; ``code`` is Placement's error code."""

    def __init__(self, detail, code='placement.undefined_code'):
        super().__init__(detail)
        self.code = code


@dataclasses.dataclass
class RequestGroup:
    """One request group; ``suffix`` is '' for the unsuffixed group."""

    suffix: str = ''
    resources: dict = dataclasses.field(default_factory=dict)
    required: list = dataclasses.field(default_factory=list)  # any-of sets
    forbidden: set = dataclasses.field(default_factory=set)
    member_of: list = dataclasses.field(default_factory=list)  # any-of sets
    forbidden_aggs: set = dataclasses.field(default_factory=set)
    in_tree: str = None

    @property
    def required_names(self) -> set:
        return {name for names in self.required for name in names}


_BAD_RESOURCES = ('Badly formed resources parameter. Expected resources '
                  'query string parameter in form: '
                  '?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')


def parse_resources(value: str) -> dict:
    """``"VCPU:1,MEMORY_MB:512"`` -> ``{"VCPU": 1, "MEMORY_MB": 512}``.

    An amount above ``MAX_INT`` is refused like a malformed one: no
    allocation can hold it, and the database compares amounts as 32-bit
    integers.
    """
    if not value.strip():
        raise QueryError(_BAD_RESOURCES % 'empty string')
    result = {}
    for item in value.split(','):
        name, sep, amount = item.strip().partition(':')
        if not sep or ':' in amount or not RESOURCE_RE.match(name):
            raise QueryError(_BAD_RESOURCES % item)
        try:
            amount = int(amount)
        except ValueError:
            raise QueryError('Requested resource %s expected positive '
                             'integer amount. Got: %s.' % (name, amount))
        if amount < 1:
            raise QueryError('Requested resource %s requires amount >= 1. '
                             'Got: %d.' % (name, amount))
        if amount > common.MAX_INT or name in result:
            raise QueryError(_BAD_RESOURCES % value)
        result[name] = amount
    return result


def _parse_any_traits(value, version) -> set:
    """``in:A,B`` (1.39+) -> ``{A, B}``, any of which will do."""
    if not mv.allow_any_traits(version):
        raise QueryError("Invalid query string parameters: The format "
                         "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                         "since microversion 1.39. Got: %s" % value)
    names = {name.strip() for name in value[3:].split(',')}
    if not all(names):
        raise QueryError("Invalid query string parameters: Expected "
                         "'required' parameter value of the form: "
                         "in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait "
                         "in: %s" % value)
    if any(name.startswith('!') for name in names):
        raise QueryError("Invalid query string parameters: The format "
                         "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
                         "forbidden traits. Got: %s" % value)
    return names


def _parse_trait_list(value, version) -> tuple:
    """``A,!B`` -> ``([{A}], {B})``; a leading run of ``!`` forbids
    (1.22+), as in Placement."""
    allow_forbidden = mv.allow_forbidden_traits(version)
    names = [name.strip() for name in value.split(',')]
    forbidden = {name.lstrip('!') for name in names if name.startswith('!')}
    if not all(names) or not all(forbidden):
        raise QueryError(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: %s. Got an empty trait in: %s" % (
                'HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
                else 'HW_CPU_X86_VMX,CUSTOM_MAGIC', value))
    if forbidden and not allow_forbidden:
        raise QueryError(
            "Invalid query string parameters: Expected 'required' parameter "
            "value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s" % value)
    required = [{name} for name in names if not name.startswith('!')]
    return required, forbidden


def parse_root_required(values, version) -> tuple:
    """``root_required`` -> (list of one-trait sets, forbidden set): given
    once, without ``in:``, and with no trait both required and
    forbidden."""
    if len(values) > 1:
        raise QueryError("Query parameter 'root_required' may be specified "
                         "only once.", 'placement.query.duplicate_key')
    if values[0].startswith('in:'):
        raise QueryError("Invalid query string parameters: The format "
                         "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                         "since microversion 1.39. Got: %s" % values[0])
    required, forbidden = _parse_trait_list(values[0], version)
    conflicts = sorted(name for names in required for name in names
                       if name in forbidden)
    if conflicts:
        raise QueryError('Conflicting required and forbidden traits found '
                         'in root_required: %s' % ', '.join(conflicts),
                         'placement.query.bad_value')
    return required, forbidden


def parse_traits(values, version) -> tuple:
    """Values of ``required`` -> (list of any-of sets, forbidden set).

    Before 1.39 only the last of repeated values counts, as in Placement.
    """
    if not mv.allow_any_traits(version):
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        if value.startswith('in:'):
            required.append(_parse_any_traits(value, version))
            continue
        more_required, more_forbidden = _parse_trait_list(value, version)
        required += more_required
        forbidden |= more_forbidden
    return required, forbidden


def _parse_one_member_of(value) -> tuple:
    """One ``member_of`` value -> (any-of set, forbidden set): a uuid,
    ``!uuid``, ``in:a,b`` or ``!in:a,b``."""
    if ',' in value and not value.startswith(('in:', '!in:')):
        raise QueryError("Multiple values for 'member_of' must be prefixed "
                         "with the 'in:' or '!in:' keyword using the valid "
                         "microversion. Got: %s" % value)
    negate = value.startswith('!')
    uuids = value[1:] if negate else value
    if uuids.startswith('in:'):
        uuids = uuids[3:]
    uuids = set(uuids.split(','))
    for uuid in sorted(uuids):
        if not _is_uuid(uuid):
            raise QueryError('Invalid query string parameters: Expected '
                             "'member_of' parameter to contain valid UUID(s)."
                             ' Got: %s' % uuid)
    return (set(), uuids) if negate else (uuids, set())


def parse_member_of(values, version, suffix='') -> tuple:
    """Values of ``member_of`` -> (list of any-of sets, forbidden set)."""
    if len(values) > 1 and not mv.allow_multi_member_of(version):
        raise QueryError('Multiple member_of%s parameters are not '
                         'supported' % suffix)
    any_of, forbidden = [], set()
    for value in values:
        required, negated = _parse_one_member_of(value)
        if required:
            any_of.append(required)
        if negated and not mv.allow_forbidden_aggregates(version):
            raise QueryError('Forbidden member_of%s parameters are not '
                             'supported in the specified microversion'
                             % suffix)
        forbidden |= negated
    return any_of, forbidden


_UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                      r'[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')


def _is_uuid(value) -> bool:
    return bool(_UUID_RE.match(value))


def split_key(key: str, version) -> tuple:
    """``"resources_X"`` -> ``("resources", "_X")``; (None, None) if not."""
    for prefix in GROUP_PARAMS:
        if key.startswith(prefix):
            suffix = key[len(prefix):]
            if not suffix:
                return prefix, ''
            pattern = (STRING_SUFFIX_RE if mv.allow_string_suffixes(version)
                       else NUMERIC_SUFFIX_RE)
            if mv.allow_granular(version) and pattern.match(suffix):
                return prefix, suffix
    return None, None


def _fill_group(group, prefix, values, version):
    if prefix == 'resources':
        if len(values) > 1:
            raise QueryError('Query parameter resources%s may only be '
                             'given once.' % group.suffix,
                             'placement.query.duplicate_key')
        group.resources = parse_resources(values[0])
    elif prefix == 'required':
        required, forbidden = parse_traits(values, version)
        group.required += required
        group.forbidden |= forbidden
    elif prefix == 'member_of':
        group.member_of, group.forbidden_aggs = parse_member_of(
            values, version, group.suffix)
    elif prefix == 'in_tree':
        value = values[-1].strip()
        if not _is_uuid(value):
            raise QueryError('Invalid query string parameters: Expected '
                             "'in_tree' parameter to be a format of uuid. "
                             'Got: %s' % values[-1])
        group.in_tree = value


def parse_groups(params, version, allowed_globals) -> tuple:
    """A webob MultiDict -> ({suffix: RequestGroup}, {global: [values]})."""
    groups, others, seen = {}, {}, set()
    for key in params.keys():
        if key in seen:
            continue
        seen.add(key)
        prefix, suffix = split_key(key, version)
        values = params.getall(key)
        if prefix is None:
            if key not in allowed_globals:
                raise QueryError('Invalid query string parameters: '
                                 "Additional properties are not allowed "
                                 "('%s' was unexpected)" % key)
            others[key] = values
            continue
        group = groups.setdefault(suffix, RequestGroup(suffix=suffix))
        _fill_group(group, prefix, values, version)
    return groups, others
