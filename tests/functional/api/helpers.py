"""Assertions and small builders shared by the v2 API functional tests."""

import contextlib
import json
import uuid

from tests.fixtures import cyborg_api

# The Accept headers a body-less answer must satisfy: none, and the
# ``application/json`` that Nova's and openstacksdk's sessions send on
# every request.
ACCEPTS = [{}, {'Accept': 'application/json'}]


@contextlib.contextmanager
def programming_stack(tmp_path_factory, program_command, hosts=1,
                      overrides=None):
    """A started all-in-one whose agents program FPGAs with
    ``program_command`` (a test's stand-in for the vendor tool), their
    bitstreams in the stack's ``bitstream_dir``; ``overrides`` adds
    other options."""
    state = tmp_path_factory.mktemp('stack')
    bitstreams = state / 'bitstreams'
    bitstreams.mkdir()
    options = dict(overrides or {})
    options[('agent', 'fpga_program_command')] = program_command
    options[('agent', 'bitstream_dir')] = str(bitstreams)
    with cyborg_api.CyborgStack(state, hosts=hosts,
                                overrides=options) as stack:
        stack.bitstream_dir = str(bitstreams)
        yield stack


def fault(resp):
    """The decoded fault of an error response; asserts the envelope:
    ``{"error_message": "<JSON string with faultcode, faultstring,
    debuginfo>"}``, served as JSON."""
    assert resp.headers['Content-Type'].startswith('application/json'), (
        resp.headers['Content-Type'], resp.text[:200])
    body = resp.json()
    assert list(body) == ['error_message'], body
    assert isinstance(body['error_message'], str)
    inner = json.loads(body['error_message'])
    assert set(inner) == {'faultcode', 'faultstring', 'debuginfo'}, inner
    assert inner['faultcode'] == (
        'Client' if resp.status_code < 500 else 'Server')
    assert inner['debuginfo'] is None
    assert 'Traceback' not in inner['faultstring']
    return inner


def assert_error(resp, status, *fragments):
    """``resp`` has ``status``, the error envelope, and a faultstring
    holding every fragment; returns the faultstring."""
    assert resp.status_code == status, (resp.status_code, resp.text[:500])
    message = fault(resp)['faultstring']
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def assert_no_content(resp, status=204):
    assert resp.status_code == status, (resp.status_code, resp.text[:500])
    assert resp.content == b''


def unique(prefix='dp'):
    return '%s-%s' % (prefix, uuid.uuid4().hex[:12])


def new_uuid():
    return str(uuid.uuid4())


# A UUID that names nothing, for test parameters: the same in every
# collection, as pytest-xdist's workers must see the same tests.
ABSENT_UUID = '0e4b8d2c-5f1a-4c3e-9b7d-000000000404'


def create_profile(client, groups, name=None, **extra):
    """POST a device profile; returns its JSON (asserting 201)."""
    body = dict(name=name or unique(), groups=groups, **extra)
    resp = client.post('/device_profiles', json=[body])
    assert resp.status_code == 201, resp.text
    return resp.json()


def create_arqs(client, profile_name):
    resp = client.post('/accelerator_requests',
                       json={'device_profile_name': profile_name})
    assert resp.status_code == 201, resp.text
    return resp.json()['arqs']


def member_service(project):
    """A project member whose request carries a service token, as Nova
    sends on behalf of a user."""
    return dict(cyborg_api.member(project), **{'X-Service-Roles': 'service'})
