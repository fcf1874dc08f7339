"""/v2/device_profiles over HTTP: create, list, show, delete, policy."""

import pytest

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

FPGA_GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}


@pytest.fixture
def v22(stack):
    return stack.client(cyborg_api.ADMIN, version='2.2')


@pytest.fixture
def reader(stack):
    return stack.client(cyborg_api.member('dp-project'))


def _names(client):
    resp = client.get('/device_profiles')
    assert resp.status_code == 200
    return {dp['name'] for dp in resp.json()['device_profiles']}


# --- create -----------------------------------------------------------

def test_create_returns_unwrapped_profile(admin, stack):
    name = helpers.unique()
    groups = [{'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required',
               'accel:bitstream_id': helpers.new_uuid()},
              {'resources:PGPU': '1'}]
    resp = admin.post('/device_profiles', json=[
        {'name': name, 'description': 'two groups', 'groups': groups}])
    assert resp.status_code == 201
    dp = resp.json()
    assert dp['name'] == name
    assert dp['description'] == 'two groups'
    assert dp['groups'] == groups
    assert dp['created_at'] and dp['updated_at'] is None
    assert dp['links'] == [{
        'href': '%s/accelerator/v2/device_profiles/%s' % (stack.url,
                                                          dp['uuid']),
        'rel': 'self'}]
    assert 'id' not in dp
    shown = admin.get('/device_profiles/' + dp['uuid'])
    assert shown.json()['device_profile'] == dp


def test_create_with_given_uuid(admin):
    uuid = helpers.new_uuid()
    dp = helpers.create_profile(admin, [FPGA_GROUP], uuid=uuid)
    assert dp['uuid'] == uuid
    assert dp['description'] is None


def test_create_strips_whitespace_in_keys(admin):
    dp = helpers.create_profile(admin, [{'resources: FPGA ': '2',
                                         'trait:  CUSTOM_X ': 'forbidden'}])
    assert dp['groups'] == [{'resources:FPGA': '2',
                             'trait:CUSTOM_X': 'forbidden'}]
    shown = admin.get('/device_profiles?name=' + dp['name'])
    assert shown.json()['device_profiles'][0]['groups'] == dp['groups']


@pytest.mark.parametrize('group', [
    {'resources:FPGA': '1'},
    {'resources:GPU': '1'}, {'resources:VGPU': '2'}, {'resources:PGPU': '1'},
    {'resources:CUSTOM_QAT': '1'}, {'resources:CUSTOM_NIC': '1'},
    {'resources:CUSTOM_SSD': '1'}, {'resources:CUSTOM_ANYTHING_9': '3'},
    {'resources:FPGA': '1', 'trait:CUSTOM_A': 'required',
     'trait:CUSTOM_B': 'forbidden', 'accel:function_id': 'anything',
     'accel:other': ''},
])
def test_create_accepts_valid_groups(admin, group):
    dp = helpers.create_profile(admin, [group])
    assert dp['groups'] == [group]


@pytest.mark.parametrize('group,fragment', [
    ({'resource:FPGA': '1'}, 'must start with'),
    ({'FPGA': '1'}, 'must start with'),
    ({'resources:FPGA': '1', 'traits:CUSTOM_A': 'required'},
     'must start with'),
    ({'resources:NOT_A_RC': '1'}, 'does not start with CUSTOM_'),
    ({'resources:fpga': '1'}, 'does not start with CUSTOM_'),
    ({'resources:FPGA': 'one'}, 'is not an integer'),
    ({'resources:FPGA': '1.5'}, 'is not an integer'),
    ({'resources:FPGA': '1', 'trait:OWNER_CYBORG': 'required'},
     'must start with CUSTOM_'),
    ({'resources:FPGA': '1', 'trait:CUSTOM_A': 'preferred'},
     'must be "required" or "forbidden"'),
    ({'resources:FPGA': '1', 'trait:CUSTOM_A': 'REQUIRED'},
     'must be "required" or "forbidden"'),
    # A bitstream names a file of the agents' bitstream_dir, no other.
    ({'resources:FPGA': '1', 'accel:bitstream_id': '../../etc/shadow'},
     'not a path'),
    ({'resources:FPGA': '1', 'accel:bitstream_id': '/etc/shadow'},
     'not a path'),
    ({'resources:FPGA': '1', 'accel:bitstream_id': '.hidden'},
     'not a path'),
    ({'resources:FPGA': '1', 'accel:bitstream_id': ''}, 'not a path'),
])
def test_create_rejects_bad_group_keys(admin, group, fragment):
    name = helpers.unique()
    resp = admin.post('/device_profiles',
                      json=[{'name': name, 'groups': [group]}])
    helpers.assert_error(resp, 400, fragment)
    assert name not in _names(admin)


@pytest.mark.parametrize('name', [
    'has space', 'semi;colon', 'dot.name', 'slash/name', 'ünïcode', "q'uote"])
def test_create_rejects_bad_name_pattern(admin, name):
    resp = admin.post('/device_profiles',
                      json=[{'name': name, 'groups': [FPGA_GROUP]}])
    helpers.assert_error(resp, 400, 'does not match')
    assert name not in _names(admin)


def test_create_rejects_a_name_ending_in_a_newline(admin):
    """A "$" pattern lets a final newline through: such a name could
    never be named in a URL again."""
    name = helpers.unique()
    resp = admin.post('/device_profiles',
                      json=[{'name': name + '\n', 'groups': [FPGA_GROUP]}])
    helpers.assert_error(resp, 400, 'may only contain')
    assert name + '\n' not in _names(admin)


@pytest.mark.parametrize('group,fragment', [
    ({'resources:CUSTOM_': '1'}, 'a custom one more than CUSTOM_'),
    ({'resources:FPGA': '1', 'trait:CUSTOM_': 'required'},
     'be longer than it'),
    ({'resources:FPGA': '1', 'accel:bitstream_id': 'image\n'},
     'not a path'),
])
def test_create_rejects_names_placement_refuses(admin, group, fragment):
    name = helpers.unique()
    resp = admin.post('/device_profiles', json=[
        {'name': name, 'groups': [group]}])
    helpers.assert_error(resp, 400, fragment)
    assert name not in _names(admin)


@pytest.mark.parametrize('form', [
    lambda u: u.upper(), lambda u: '{%s}' % u, lambda u: 'urn:uuid:' + u,
    lambda u: u.replace('-', '')])
def test_a_given_uuid_in_any_form_is_stored_canonical(admin, form):
    """As the other UUIDs the API takes: one profile per UUID however it
    is written, shown and found in its canonical form."""
    uuid = helpers.new_uuid()
    dp = helpers.create_profile(admin, [FPGA_GROUP], uuid=form(uuid))
    assert dp['uuid'] == uuid
    assert dp['links'][0]['href'].endswith('/device_profiles/' + uuid)
    resp = admin.post('/device_profiles', json=[
        {'name': helpers.unique(), 'uuid': uuid, 'groups': [FPGA_GROUP]}])
    helpers.assert_error(resp, 409, uuid, 'already exists')
    assert admin.get('/device_profiles/' + uuid.upper()).json()[
        'device_profile']['uuid'] == uuid
    assert admin.delete('/device_profiles/' + uuid.upper()).status_code \
        == 204


@pytest.mark.parametrize('profile,fragment', [
    ({'groups': [FPGA_GROUP]}, "'name' is a required property"),
    ({'name': '', 'groups': [FPGA_GROUP]}, 'name'),
    ({'name': None, 'groups': [FPGA_GROUP]}, 'name'),
    ({'name': 'no-groups'}, "'groups' is a required property"),
    ({'name': 'empty-groups', 'groups': []}, 'groups'),
    ({'name': 'empty-group', 'groups': [{}]}, 'groups'),
    ({'name': 'x' * 256, 'groups': [FPGA_GROUP]}, 'name'),
    ({'name': 'extra', 'groups': [FPGA_GROUP], 'color': 'red'},
     'Additional properties are not allowed'),
    ({'name': 'bad-uuid', 'uuid': 'not-a-uuid', 'groups': [FPGA_GROUP]},
     'uuid'),
    ({'name': 'int-value', 'groups': [{'resources:FPGA': 1}]},
     'is not of type'),
    ({'name': 'no-resources', 'groups': [{'trait:CUSTOM_A': 'required'}]},
     'resources:'),
    ({'name': 'long-desc', 'description': 'd' * 256,
      'groups': [FPGA_GROUP]}, 'description'),
])
def test_create_rejects_bad_profiles(admin, profile, fragment):
    before = _names(admin)
    resp = admin.post('/device_profiles', json=[profile])
    helpers.assert_error(resp, 400, fragment)
    assert _names(admin) == before


@pytest.mark.parametrize('body', [
    [], {'name': 'not-a-list', 'groups': [FPGA_GROUP]},
    [{'name': 'two-a', 'groups': [FPGA_GROUP]},
     {'name': 'two-b', 'groups': [FPGA_GROUP]}],
    'a string', None,
])
def test_create_body_must_be_list_of_one(admin, body):
    before = _names(admin)
    resp = admin.post('/device_profiles', json=body)
    helpers.assert_error(resp, 400)
    assert _names(admin) == before


def test_name_of_255_characters_is_accepted(admin):
    dp = helpers.create_profile(admin, [FPGA_GROUP], name='n' * 255)
    assert dp['name'] == 'n' * 255
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['uuid']))


def test_duplicate_name_is_409(admin):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    resp = admin.post('/device_profiles',
                      json=[{'name': dp['name'], 'groups': [FPGA_GROUP]}])
    helpers.assert_error(resp, 409, dp['name'], 'already exists')
    listed = admin.get('/device_profiles?name=' + dp['name']).json()
    assert [d['uuid'] for d in listed['device_profiles']] == [dp['uuid']]


def test_duplicate_uuid_is_409(admin):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    name = helpers.unique()
    resp = admin.post('/device_profiles', json=[
        {'name': name, 'uuid': dp['uuid'], 'groups': [FPGA_GROUP]}])
    helpers.assert_error(resp, 409, dp['uuid'], 'already exists')
    assert name not in _names(admin)


# --- list and show ----------------------------------------------------

def test_list_filters_by_names(admin):
    a = helpers.create_profile(admin, [FPGA_GROUP])
    b = helpers.create_profile(admin, [FPGA_GROUP])
    helpers.create_profile(admin, [FPGA_GROUP])
    resp = admin.get('/device_profiles?name=%s,%s' % (a['name'], b['name']))
    assert resp.status_code == 200
    got = resp.json()['device_profiles']
    assert sorted(d['uuid'] for d in got) == sorted([a['uuid'], b['uuid']])
    assert got[0]['links'][0]['rel'] == 'self'
    resp = admin.get('/device_profiles?name=no-such-profile')
    assert resp.status_code == 200
    assert resp.json() == {'device_profiles': []}
    everything = admin.get('/device_profiles').json()['device_profiles']
    assert {a['uuid'], b['uuid']} <= {d['uuid'] for d in everything}


def test_show_by_uuid_is_wrapped(admin):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    resp = admin.get('/device_profiles/' + dp['uuid'])
    assert resp.status_code == 200
    assert resp.json() == {'device_profile': dp}


def test_show_unknown_uuid_is_404(admin):
    uuid = helpers.new_uuid()
    helpers.assert_error(admin.get('/device_profiles/' + uuid), 404, uuid)


def test_show_by_name_needs_2_2(admin, v22, stack):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    helpers.assert_error(admin.get('/device_profiles/' + dp['name']), 406,
                         'minimal required API version should be 2.2')
    v21 = stack.client(cyborg_api.ADMIN, version='2.1')
    helpers.assert_error(v21.get('/device_profiles/' + dp['name']), 406)
    resp = v22.get('/device_profiles/' + dp['name'])
    assert resp.status_code == 200
    assert resp.json() == {'device_profile': dp}
    helpers.assert_error(v22.get('/device_profiles/no-such-name'), 404,
                         'no-such-name')


# --- delete -----------------------------------------------------------

@pytest.mark.parametrize('accept', helpers.ACCEPTS)
def test_delete_by_uuid(admin, accept):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['uuid'],
                                           headers=accept))
    helpers.assert_error(admin.get('/device_profiles/' + dp['uuid']), 404)
    helpers.assert_error(admin.delete('/device_profiles/' + dp['uuid']), 404)


def test_delete_by_name(admin):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['name']))
    assert dp['name'] not in _names(admin)


def test_delete_by_value_list(admin):
    a = helpers.create_profile(admin, [FPGA_GROUP])
    b = helpers.create_profile(admin, [FPGA_GROUP])
    resp = admin.delete('/device_profiles?value=%s,%s' % (a['name'],
                                                          b['name']))
    helpers.assert_no_content(resp)
    assert not {a['name'], b['name']} & _names(admin)


def test_delete_by_value_is_all_or_nothing(admin):
    a = helpers.create_profile(admin, [FPGA_GROUP])
    resp = admin.delete('/device_profiles?value=%s,missing-dp-xyz'
                        % a['name'])
    helpers.assert_error(resp, 404, 'missing-dp-xyz')
    assert a['name'] in _names(admin)


@pytest.mark.parametrize('path', ['/device_profiles',
                                  '/device_profiles?value=',
                                  '/device_profiles?value=,'])
def test_delete_without_names_is_400(admin, path):
    before = _names(admin)
    helpers.assert_error(admin.delete(path), 400)
    assert _names(admin) == before


def test_delete_unknown_is_404(admin):
    helpers.assert_error(admin.delete('/device_profiles/no-such-dp'), 404,
                         'no-such-dp')
    uuid = helpers.new_uuid()
    helpers.assert_error(admin.delete('/device_profiles/' + uuid), 404, uuid)


def test_delete_profile_in_use_is_409(admin):
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}])
    arqs = helpers.create_arqs(admin, dp['name'])
    helpers.assert_error(admin.delete('/device_profiles/' + dp['uuid']), 409,
                         dp['name'])
    helpers.assert_error(
        admin.delete('/device_profiles?value=' + dp['name']), 409)
    assert dp['name'] in _names(admin)
    helpers.assert_no_content(
        admin.delete('/accelerator_requests?arqs=' + arqs[0]['uuid']))
    helpers.assert_no_content(admin.delete('/device_profiles/' + dp['uuid']))


# --- policy -----------------------------------------------------------

def test_member_can_list_and_show(admin, reader):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    resp = reader.get('/device_profiles?name=' + dp['name'])
    assert resp.status_code == 200
    assert [d['uuid'] for d in resp.json()['device_profiles']] == [dp['uuid']]
    resp = reader.get('/device_profiles/' + dp['uuid'])
    assert resp.status_code == 200
    assert resp.json()['device_profile']['name'] == dp['name']


def test_member_cannot_create(admin, reader):
    name = helpers.unique()
    resp = reader.post('/device_profiles',
                       json=[{'name': name, 'groups': [FPGA_GROUP]}])
    message = helpers.assert_error(resp, 403)
    assert message == ('Access was denied to the following resource: '
                       'cyborg:device_profile:create')
    assert name not in _names(admin)


def test_member_cannot_delete(admin, reader):
    dp = helpers.create_profile(admin, [FPGA_GROUP])
    for path in ('/device_profiles/' + dp['uuid'],
                 '/device_profiles/' + dp['name'],
                 '/device_profiles?value=' + dp['name']):
        message = helpers.assert_error(reader.delete(path), 403)
        assert message == ('Access was denied to the following resource: '
                           'cyborg:device_profile:delete')
    assert dp['name'] in _names(admin)


def test_no_roles_cannot_read(stack):
    client = stack.client({'X-Project-Id': 'p', 'X-User-Id': 'u',
                           'X-Roles': 'nothing'})
    helpers.assert_error(client.get('/device_profiles'), 403,
                         'cyborg:device_profile:get_all')
