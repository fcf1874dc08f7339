"""The compiled check and jsonschema agree on every request body.

``cyborg_lite.api.validation.validate`` lets the check compiled by
fastjsonschema accept a body on its own, and asks jsonschema only about
the bodies it refuses. Hypothesis generates bodies for every schema the
API validates with (valid ones changed here and there, and arbitrary
JSON) and both must give the same verdict on each.
"""

import uuid

import fastjsonschema
import hypothesis
import jsonschema
import pytest
from hypothesis import strategies as st

from cyborg_lite import exception
from cyborg_lite.api import validation
from cyborg_lite.api.schemas import accelerator_requests
from cyborg_lite.api.schemas import attributes
from cyborg_lite.api.schemas import device_profiles

UUID = str(uuid.UUID(int=7))

# Each schema with a body it accepts.
CASES = {
    'arq_post': (accelerator_requests.POST_ARQ_SCHEMA_V2_0,
                 {'device_profile_name': 'dp', 'image_uuid': None,
                  'device_profile_group_id': 0}),
    'arq_patch': (accelerator_requests.PATCH_ARQ_SCHEMA_V2_0,
                  {UUID: [{'op': 'add', 'path': '/hostname', 'value': 'h'},
                          {'op': 'add', 'path': '/device_rp_uuid',
                           'value': UUID},
                          {'op': 'remove', 'path': '/project_id'}]}),
    'device_profile': (device_profiles.POST_DEVICE_PROFILE_SCHEMA_V2_0,
                       [{'name': 'dp-1', 'uuid': UUID, 'description': None,
                         'groups': [{'resources:FPGA': '1',
                                     'trait:CUSTOM_X': 'required'}]}]),
    'attribute': (attributes.POST_ATTRIBUTE_SCHEMA_V2_0,
                  {'deployable_id': 1, 'key': 'k', 'value': 'v'}),
    'program': (attributes.PATCH_PROGRAM_SCHEMA_V2_0,
                [{'op': 'replace', 'path': '/program',
                  'value': [{'image_uuid': UUID}]}]),
}

# Leaves near the edges the schemas draw: enum members, lengths at and
# past their limits, integers and floats at integer bounds, look-alikes.
LEAVES = st.one_of(
    st.none(), st.booleans(),
    st.sampled_from([0, 1, -1, 1.0, 1.5, 2 ** 31 - 1, 2 ** 31, 10 ** 20,
                     float('inf')]),
    st.integers(), st.floats(allow_nan=False),
    st.sampled_from(['', 'add', 'remove', 'replace', '/hostname',
                     '/device_rp_uuid', '/instance_uuid', '/project_id',
                     '/program', 'dp', 'dp 1', 'dp\n', UUID, UUID.upper(),
                     UUID.replace('-', ''), UUID + 'x', 'x' * 255,
                     'x' * 256, 'é' * 255, 'é' * 256]),
    st.text(max_size=20))
KEYS = st.one_of(
    st.sampled_from(['device_profile_name', 'device_profile_group_id',
                     'image_uuid', 'op', 'path', 'value', 'name',
                     'description', 'uuid', 'groups', 'deployable_id', 'key',
                     'image_uuid', UUID, '', 'resources:GPU']),
    st.text(max_size=10))
JSON = st.recursive(
    LEAVES, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12)


@st.composite
def _changed(draw, value):
    """``value``, with some of its parts replaced, dropped or added."""
    if draw(st.integers(0, 24)) == 0:
        return draw(JSON)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if draw(st.integers(0, 15)) != 0:
                out[key] = draw(_changed(item))
        if draw(st.integers(0, 11)) == 0:
            out[draw(KEYS)] = draw(JSON)
        return out
    if isinstance(value, list):
        out = [draw(_changed(item)) for item in value
               if draw(st.integers(0, 7)) != 0]
        if value and draw(st.integers(0, 11)) == 0:
            out += [draw(_changed(value[0]))] * draw(st.integers(1, 70))
        return out
    return value


def _verdicts(schema, body):
    try:
        validation.compiled(schema)(body)
        fast = True
    except fastjsonschema.JsonSchemaException:
        fast = False
    validator = jsonschema.Draft7Validator(
        schema, format_checker=validation._FORMATS)
    return fast, validator.is_valid(body)


@pytest.mark.parametrize('case', sorted(CASES))
def test_the_examples_are_valid(case):
    schema, body = CASES[case]
    assert _verdicts(schema, body) == (True, True)
    assert validation.validate(body, schema) is body


@pytest.mark.parametrize('case', sorted(CASES))
@hypothesis.settings(max_examples=400, deadline=None, database=None,
                     derandomize=True)
@hypothesis.given(data=st.data())
def test_compiled_check_agrees_with_jsonschema(case, data):
    schema, example = CASES[case]
    body = data.draw(st.one_of(_changed(example), JSON))
    fast, slow = _verdicts(schema, body)
    assert fast == slow, (body, fast, slow)
    if not slow:
        with pytest.raises(exception.Invalid):
            validation.validate(body, schema)
