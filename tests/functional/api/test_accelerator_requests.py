"""/v2/accelerator_requests over HTTP: create, list, show, bind, unbind,
delete and project isolation, against the real conductor and database.

The module's stack programs FPGAs with a command that waits for a gate
file, so that a test can hold an ARQ in BindStarted for as long as it
needs (the 423 of ``?instance=&bind_state=resolved``).
"""

import os
import time

import pytest

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

# $1 is the PCI address, $2 the bitstream path; the wait ends after 30 s
# even if a test never opens the gate. (No "$name": oslo.config would
# substitute it.)
GATE_COMMAND = ("sh -c 'for n in $(seq 600); do [ -e \"$2.go\" ] && break; "
                "sleep 0.05; done' program")
ARQ_FIELDS = {'uuid', 'state', 'device_profile_name',
              'device_profile_group_id', 'hostname', 'device_rp_uuid',
              'instance_uuid', 'project_id', 'attach_handle_type',
              'attach_handle_uuid', 'attach_handle_info', 'created_at',
              'updated_at', 'links'}


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with helpers.programming_stack(tmp_path_factory, GATE_COMMAND,
                                   hosts=2) as s:
        yield s


@pytest.fixture(scope='module')
def fpga(stack):
    """The FPGA deployable of host 0, which most binds use. Host 1's
    FPGA is kept for the test that fills all of its 16 handles."""
    return stack.deployable('FPGA', 0)


@pytest.fixture(scope='module')
def profile(stack):
    return helpers.create_profile(stack.client(cyborg_api.ADMIN),
                                  [{'resources:FPGA': '1'}])['name']


@pytest.fixture(scope='module')
def profile2(stack):
    return helpers.create_profile(stack.client(cyborg_api.ADMIN),
                                  [{'resources:FPGA': '2'}])['name']


@pytest.fixture
def instance(service):
    """A fresh instance uuid factory; the instances' ARQs are deleted
    afterwards so that handles of host 0 stay free for later tests."""
    made = []

    def new():
        made.append(helpers.new_uuid())
        return made[-1]
    yield new
    for uuid in made:
        assert service.delete('/accelerator_requests?instance='
                              + uuid).status_code == 204


def _show(client, uuid):
    resp = client.get('/accelerator_requests/' + uuid)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _bind(client, stack, arqs, dep, instance, path='/accelerator_requests'):
    host = stack.aio.hostnames[0 if dep['name'].startswith(
        stack.aio.hostnames[0]) else 1]
    return client.patch(path, json=cyborg_api.bind_patch(
        [a['uuid'] if isinstance(a, dict) else a for a in arqs], host,
        dep['rp_uuid'], instance))


def _assert_unattached(arq):
    assert arq['attach_handle_type'] == ''
    assert arq['attach_handle_info'] == {}
    assert arq['attach_handle_uuid'] is None


def _assert_bound(arq, stack, dep, instance):
    assert arq['state'] == 'Bound'
    assert arq['hostname'] in stack.aio.hostnames
    assert dep['name'].startswith(arq['hostname'])
    assert arq['device_rp_uuid'] == dep['rp_uuid']
    assert arq['instance_uuid'] == instance
    assert arq['attach_handle_type'] == 'PCI'
    info = arq['attach_handle_info']
    assert set(info) == {'domain', 'bus', 'device', 'function'}
    assert all(isinstance(v, str) and v for v in info.values())
    assert info['domain'] == '0000' and info['bus'] == '0c'
    assert helpers.new_uuid().count('-') == arq['attach_handle_uuid'].count(
        '-')


# --- create -----------------------------------------------------------

def test_create_one_arq_per_resource_unit(admin, stack):
    dp = helpers.create_profile(admin, [
        {'resources:FPGA': '2', 'resources:CUSTOM_ACCEL': '1',
         'trait:CUSTOM_FAKE_DEVICE': 'required'},
        {'resources:PGPU': '1'}])
    resp = admin.post('/accelerator_requests',
                      json={'device_profile_name': dp['name']})
    assert resp.status_code == 201
    arqs = resp.json()['arqs']
    assert [a['device_profile_group_id'] for a in arqs] == [0, 0, 0, 1]
    assert len({a['uuid'] for a in arqs}) == 4
    for arq in arqs:
        assert set(arq) == ARQ_FIELDS
        assert arq['state'] == 'Initial'
        assert arq['device_profile_name'] == dp['name']
        assert arq['project_id'] == cyborg_api.ADMIN['X-Project-Id']
        assert arq['hostname'] is None
        assert arq['device_rp_uuid'] is None
        assert arq['instance_uuid'] is None
        _assert_unattached(arq)
        assert arq['links'] == [{
            'href': '%s/accelerator/v2/accelerator_requests/%s' % (
                stack.url, arq['uuid']), 'rel': 'self'}]
        assert _show(admin, arq['uuid']) == arq


@pytest.mark.parametrize('trait,count', [('required', 4), ('forbidden', 2)])
def test_create_xilinx_needs_two_handles_per_card(admin, trait, count):
    dp = helpers.create_profile(admin, [
        {'resources:FPGA': '2', 'trait:CUSTOM_FPGA_XILINX': trait}])
    arqs = helpers.create_arqs(admin, dp['name'])
    assert len(arqs) == count
    assert {a['state'] for a in arqs} == {'Initial'}


def test_create_takes_project_from_caller(stack, profile):
    client = stack.client(cyborg_api.member('proj-create'))
    arqs = helpers.create_arqs(client, profile)
    assert [a['project_id'] for a in arqs] == ['proj-create']
    assert _show(client, arqs[0]['uuid'])['project_id'] == 'proj-create'


def test_create_ignores_future_fields(admin, profile):
    resp = admin.post('/accelerator_requests', json={
        'device_profile_name': profile, 'device_profile_group_id': 3,
        'image_uuid': helpers.new_uuid()})
    assert resp.status_code == 201
    assert [a['device_profile_group_id'] for a in resp.json()['arqs']] == [0]


@pytest.mark.parametrize('name', ['no-such-profile', '', "' OR 1=1 --",
                                  '<script>alert(1)</script>'])
def test_create_from_unknown_profile_is_404(admin, name):
    before = admin.get('/accelerator_requests').json()
    resp = admin.post('/accelerator_requests',
                      json={'device_profile_name': name})
    helpers.assert_error(resp, 404, 'could not be found')
    assert admin.get('/accelerator_requests').json() == before


@pytest.mark.parametrize('body', [
    {}, {'device_profile_group_id': 0}, {'device_profile_name': None},
    {'device_profile_name': 7}, {'device_profile_name': ['a']},
    {'device_profile_name': 'x', 'color': 'red'}, ['x'], 'x', 42])
def test_create_with_bad_body_is_400(admin, body):
    resp = admin.post('/accelerator_requests', json=body)
    helpers.assert_error(resp, 400)


def test_create_with_no_body_is_400(admin):
    helpers.assert_error(admin.post('/accelerator_requests'), 400,
                         'no JSON body')


# --- list and show ----------------------------------------------------

def test_list_all_and_by_instance(admin, service, stack, fpga, profile,
                                  instance):
    bound = helpers.create_arqs(admin, profile)
    free = helpers.create_arqs(admin, profile)
    inst = instance()
    assert _bind(service, stack, bound, fpga, inst).status_code == 202
    resp = admin.get('/accelerator_requests')
    assert resp.status_code == 200
    listed = {a['uuid']: a for a in resp.json()['arqs']}
    assert {bound[0]['uuid'], free[0]['uuid']} <= set(listed)
    assert listed[free[0]['uuid']]['state'] == 'Initial'
    resp = admin.get('/accelerator_requests?instance=' + inst)
    assert resp.status_code == 200
    (only,) = resp.json()['arqs']
    assert only['uuid'] == bound[0]['uuid']
    _assert_bound(only, stack, fpga, inst)
    resp = admin.get('/accelerator_requests?instance=' + helpers.new_uuid())
    assert resp.status_code == 200
    assert resp.json() == {'arqs': []}


@pytest.mark.parametrize('value', ['not-a-uuid', '1234', "' OR 1=1 --"])
def test_list_bad_instance_is_400(admin, value):
    resp = admin.get('/accelerator_requests', params={'instance': value})
    helpers.assert_error(resp, 400, 'instance must be a UUID')


@pytest.mark.parametrize('value', ['bound', 'Bound', 'unresolved', ''])
def test_list_bad_bind_state_is_400(admin, value):
    resp = admin.get('/accelerator_requests', params={'bind_state': value})
    helpers.assert_error(resp, 400, 'bind_state')


def test_resolved_without_instance_lists_only_resolved(
        admin, service, stack, fpga, profile, instance):
    bound = helpers.create_arqs(admin, profile)[0]
    initial = helpers.create_arqs(admin, profile)[0]
    failed = helpers.create_arqs(admin, profile)[0]
    assert _bind(service, stack, [bound], fpga, instance()).status_code == 202
    resp = service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [failed['uuid']], stack.aio.hostnames[0], helpers.new_uuid(),
        instance()))
    assert resp.status_code == 404
    resp = admin.get('/accelerator_requests?bind_state=resolved')
    assert resp.status_code == 200
    states = {a['uuid']: a['state'] for a in resp.json()['arqs']}
    assert set(states.values()) <= {'Bound', 'BindFailed', 'Deleting'}
    assert states[bound['uuid']] == 'Bound'
    assert states[failed['uuid']] == 'BindFailed'
    assert initial['uuid'] not in states


def test_resolved_for_instance_is_423_while_binding(admin, service, stack,
                                                    fpga, instance):
    bitstream = helpers.new_uuid()
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1',
                                         'accel:bitstream_id': bitstream}])
    arq = helpers.create_arqs(admin, dp['name'])[0]
    inst = instance()
    try:
        assert _bind(service, stack, [arq], fpga, inst).status_code == 202
        assert _show(admin, arq['uuid'])['state'] == 'BindStarted'
        url = '/accelerator_requests?instance=%s&bind_state=resolved' % inst
        helpers.assert_error(admin.get(url), 423, inst)
        resp = admin.get('/accelerator_requests?instance=' + inst)
        assert [a['state'] for a in resp.json()['arqs']] == ['BindStarted']
        _assert_unattached(resp.json()['arqs'][0])
    finally:
        open(os.path.join(stack.bitstream_dir, bitstream + '.go'),
             'w').close()
    deadline = time.monotonic() + 20
    while _show(admin, arq['uuid'])['state'] == 'BindStarted':
        assert time.monotonic() < deadline, 'programming never finished'
        time.sleep(0.1)
    resp = admin.get(url)
    assert resp.status_code == 200
    (done,) = resp.json()['arqs']
    _assert_bound(done, stack, fpga, inst)
    deployable = admin.get('/deployables/' + fpga['uuid']).json()
    assert deployable['bitstream_id'] == bitstream


def test_show_is_unwrapped(admin, profile):
    arq = helpers.create_arqs(admin, profile)[0]
    shown = _show(admin, arq['uuid'])
    assert shown == arq
    assert 'arq' not in shown and 'id' not in shown


@pytest.mark.parametrize('ident', ['not-a-uuid', helpers.ABSENT_UUID,
                                   "'%20OR%201=1"])
def test_show_unknown_is_404(admin, ident):
    helpers.assert_error(admin.get('/accelerator_requests/' + ident), 404,
                         'could not be found')


# --- bind and unbind --------------------------------------------------

def test_bind_at_collection(admin, service, stack, fpga, profile2, instance):
    arqs = helpers.create_arqs(admin, profile2)
    inst = instance()
    resp = _bind(service, stack, arqs, fpga, inst)
    assert resp.status_code == 202
    assert resp.content == b''
    shown = [_show(admin, a['uuid']) for a in arqs]
    for arq in shown:
        _assert_bound(arq, stack, fpga, inst)
        assert arq['project_id'] == cyborg_api.SERVICE['X-Project-Id']
    assert len({a['attach_handle_uuid'] for a in shown}) == 2
    assert len({tuple(sorted(a['attach_handle_info'].items()))
                for a in shown}) == 2


def test_bind_at_uuid_path(admin, service, stack, fpga, profile, instance):
    arq = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    resp = _bind(service, stack, [arq], fpga, inst,
                 path='/accelerator_requests/' + arq['uuid'])
    assert resp.status_code == 202
    assert resp.content == b''
    _assert_bound(_show(admin, arq['uuid']), stack, fpga, inst)


def test_uuids_in_other_forms_are_stored_canonical(admin, service, stack,
                                                   fpga, profile, instance):
    """A bind's instance and device provider may come in any form of a
    UUID (braces, urn:uuid:, upper case): they are stored in the
    canonical one (as given, ``urn:uuid:`` and braces would not fit the
    column on PostgreSQL), and the instance filter takes any form."""
    arq = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    resp = _bind(service, stack, [arq], dict(
        fpga, rp_uuid='{%s}' % fpga['rp_uuid'].upper()),
        'urn:uuid:' + inst.upper())
    assert resp.status_code == 202, resp.text
    _assert_bound(_show(admin, arq['uuid']), stack, fpga, inst)
    for form in (inst, inst.upper(), '{%s}' % inst, inst.replace('-', '')):
        resp = admin.get('/accelerator_requests', params={'instance': form})
        assert [a['uuid'] for a in resp.json()['arqs']] == [arq['uuid']]


def test_unbind_then_rebind(admin, service, stack, fpga, profile, instance):
    arq = helpers.create_arqs(admin, profile)[0]
    first = instance()
    assert _bind(service, stack, [arq], fpga, first).status_code == 202
    resp = service.patch('/accelerator_requests/' + arq['uuid'],
                         json=cyborg_api.unbind_patch([arq['uuid']]))
    assert resp.status_code == 202
    assert resp.content == b''
    unbound = _show(admin, arq['uuid'])
    assert unbound['state'] == 'Unbound'
    assert unbound['hostname'] is None
    assert unbound['device_rp_uuid'] is None
    assert unbound['instance_uuid'] is None
    _assert_unattached(unbound)
    resp = admin.get('/accelerator_requests?instance=' + first)
    assert resp.json() == {'arqs': []}
    second = instance()
    assert _bind(service, stack, [arq], fpga, second).status_code == 202
    _assert_bound(_show(admin, arq['uuid']), stack, fpga, second)


def _ops(**paths):
    return [{'op': 'add', 'path': '/' + k, 'value': v}
            for k, v in paths.items()]


@pytest.mark.parametrize('make_ops,fragment', [
    (lambda h, rp, i: _ops(hostname=h, device_rp_uuid=rp, instance_uuid=i)[
        :2] + [{'op': 'remove', 'path': '/instance_uuid'}], 'mixes'),
    (lambda h, rp, i: _ops(hostname=h, device_rp_uuid=rp, instance_uuid=i,
                           state='Bound'), '/state'),
    (lambda h, rp, i: [{'op': 'add', 'path': 'hostname', 'value': h}],
     'hostname'),
    (lambda h, rp, i: [{'op': 'replace', 'path': '/hostname', 'value': h}],
     'replace'),
    (lambda h, rp, i: _ops(hostname=h, device_rp_uuid=rp), 'instance_uuid'),
    (lambda h, rp, i: _ops(hostname=h), 'Fields absent'),
    (lambda h, rp, i: [{'op': 'add', 'path': '/hostname'}] + _ops(
        device_rp_uuid=rp, instance_uuid=i), 'no value'),
    (lambda h, rp, i: _ops(hostname=h, device_rp_uuid='not-a-uuid',
                           instance_uuid=i), 'device_rp_uuid must be a UUID'),
    (lambda h, rp, i: _ops(hostname=h, device_rp_uuid=rp,
                           instance_uuid='nope'),
     'instance_uuid must be a UUID'),
    (lambda h, rp, i: _ops(hostname='', device_rp_uuid=rp, instance_uuid=i),
     'should be non-empty'),
    (lambda h, rp, i: [], 'should be non-empty'),
    (lambda h, rp, i: 'add', 'is not of type'),
])
def test_patch_errors_are_400(admin, service, stack, fpga, profile,
                              make_ops, fragment):
    arq = helpers.create_arqs(admin, profile)[0]
    ops = make_ops(stack.aio.hostnames[0], fpga['rp_uuid'],
                   helpers.new_uuid())
    resp = service.patch('/accelerator_requests', json={arq['uuid']: ops})
    helpers.assert_error(resp, 400, fragment)
    assert _show(admin, arq['uuid']) == arq


@pytest.mark.parametrize('body', [
    {}, {'not-a-uuid': [{'op': 'remove', 'path': '/hostname'}]},
    [{'op': 'remove', 'path': '/hostname'}], 'text'])
def test_patch_bad_body_is_400(service, body):
    helpers.assert_error(service.patch('/accelerator_requests', json=body),
                         400)


def test_patch_project_id_below_2_1_is_406(admin, stack, fpga, profile):
    arq = helpers.create_arqs(admin, profile)[0]
    patch = cyborg_api.bind_patch([arq['uuid']], stack.aio.hostnames[0],
                                  fpga['rp_uuid'], helpers.new_uuid())
    patch[arq['uuid']].append({'op': 'add', 'path': '/project_id',
                               'value': 'other'})
    for version in (None, '2.0'):
        client = stack.client(cyborg_api.SERVICE, version=version)
        helpers.assert_error(client.patch('/accelerator_requests',
                                          json=patch), 406, '2.1')
    assert _show(admin, arq['uuid']) == arq


def test_patch_project_id_by_non_admin_is_403(stack, fpga, profile):
    owner = stack.client(helpers.member_service('proj-pid'), version='2.1')
    arq = helpers.create_arqs(owner, profile)[0]
    patch = cyborg_api.bind_patch([arq['uuid']], stack.aio.hostnames[0],
                                  fpga['rp_uuid'], helpers.new_uuid())
    patch[arq['uuid']].append({'op': 'add', 'path': '/project_id',
                               'value': 'proj-pid'})
    helpers.assert_error(owner.patch('/accelerator_requests', json=patch),
                         403, 'administrators')
    assert _show(owner, arq['uuid']) == arq


def test_admin_sets_project_id_at_2_1(admin, stack, fpga, profile,
                                      instance):
    arq = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    patch = cyborg_api.bind_patch([arq['uuid']], stack.aio.hostnames[0],
                                  fpga['rp_uuid'], inst)
    patch[arq['uuid']].append({'op': 'add', 'path': '/project_id',
                               'value': 'proj-tenant'})
    client = stack.client(cyborg_api.SERVICE, version='2.1')
    resp = client.patch('/accelerator_requests', json=patch)
    assert resp.status_code == 202
    bound = _show(admin, arq['uuid'])
    _assert_bound(bound, stack, fpga, inst)
    assert bound['project_id'] == 'proj-tenant'
    tenant = stack.client(cyborg_api.member('proj-tenant'))
    assert _show(tenant, arq['uuid'])['uuid'] == arq['uuid']


def test_bind_and_unbind_need_service_token(admin, service, stack, fpga,
                                            profile, instance):
    arq = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    helpers.assert_error(_bind(admin, stack, [arq], fpga, inst), 403,
                         'requires a service token')
    assert _show(admin, arq['uuid']) == arq
    owner = stack.client(cyborg_api.member('proj-svc'))
    mine = helpers.create_arqs(owner, profile)[0]
    helpers.assert_error(_bind(owner, stack, [mine], fpga, inst), 403,
                         'requires a service token')
    assert _bind(service, stack, [arq], fpga, inst).status_code == 202
    helpers.assert_error(
        admin.patch('/accelerator_requests',
                    json=cyborg_api.unbind_patch([arq['uuid']])),
        403, 'requires a service token')
    assert _show(admin, arq['uuid'])['state'] == 'Bound'


def test_bind_to_instance_with_other_arqs_is_400(admin, service, stack,
                                                 fpga, profile, instance):
    first = helpers.create_arqs(admin, profile)[0]
    second = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    assert _bind(service, stack, [first], fpga, inst).status_code == 202
    helpers.assert_error(_bind(service, stack, [second], fpga, inst), 400,
                         'already has accelerator requests')
    assert _show(admin, second['uuid']) == second


def test_binding_a_bound_arq_is_409(admin, service, stack, fpga, profile,
                                    instance):
    arq = helpers.create_arqs(admin, profile)[0]
    inst = instance()
    assert _bind(service, stack, [arq], fpga, inst).status_code == 202
    bound = _show(admin, arq['uuid'])
    helpers.assert_error(_bind(service, stack, [arq], fpga, inst), 409,
                         'Bound')
    assert _show(admin, arq['uuid']) == bound


def test_bind_to_unknown_device_rp_fails_the_arq(admin, service, stack,
                                                 profile, instance):
    arq = helpers.create_arqs(admin, profile)[0]
    rp, inst = helpers.new_uuid(), instance()
    resp = service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq['uuid']], stack.aio.hostnames[0], rp, inst))
    helpers.assert_error(resp, 404, rp)
    failed = _show(admin, arq['uuid'])
    assert failed['state'] == 'BindFailed'
    assert failed['instance_uuid'] == inst
    _assert_unattached(failed)


def test_bind_unknown_arq_is_404(service, stack, fpga):
    uuid = helpers.new_uuid()
    helpers.assert_error(_bind(service, stack, [uuid], fpga,
                               helpers.new_uuid()), 404, uuid)


# --- delete -----------------------------------------------------------

def test_delete_by_arqs_query(admin, profile2):
    arqs = helpers.create_arqs(admin, profile2)
    uuids = [a['uuid'] for a in arqs]
    resp = admin.delete('/accelerator_requests?arqs=' + ','.join(uuids))
    helpers.assert_no_content(resp)
    for uuid in uuids:
        helpers.assert_error(admin.get('/accelerator_requests/' + uuid), 404)


def test_delete_by_arqs_with_a_missing_one_deletes_nothing(admin, profile):
    arq = helpers.create_arqs(admin, profile)[0]
    missing = helpers.new_uuid()
    resp = admin.delete('/accelerator_requests?arqs=%s,%s'
                        % (arq['uuid'], missing))
    helpers.assert_error(resp, 404, missing)
    assert _show(admin, arq['uuid']) == arq
    helpers.assert_error(
        admin.delete('/accelerator_requests?arqs=%s,bogus' % arq['uuid']),
        404, 'bogus')
    assert _show(admin, arq['uuid']) == arq


def test_bind_and_delete_answer_clients_that_accept_only_json(
        service, stack, fpga, profile):
    """Nova's and the SDK's HTTP sessions send ``Accept:
    application/json`` on every request, also on those whose answer has
    no body."""
    json_only = {'Accept': 'application/json'}
    arq = helpers.create_arqs(service, profile)[0]
    inst = helpers.new_uuid()
    resp = service.patch('/accelerator_requests', headers=json_only,
                         json=cyborg_api.bind_patch(
                             [arq['uuid']], stack.aio.hostnames[0],
                             fpga['rp_uuid'], inst))
    assert resp.status_code == 202, resp.text
    assert resp.content == b''
    _assert_bound(_show(service, arq['uuid']), stack, fpga, inst)
    resp = service.delete('/accelerator_requests?instance=' + inst,
                          headers=json_only)
    helpers.assert_no_content(resp)
    helpers.assert_error(service.get('/accelerator_requests/' + arq['uuid']),
                         404)


def test_delete_by_path(admin, profile):
    arq = helpers.create_arqs(admin, profile)[0]
    helpers.assert_no_content(
        admin.delete('/accelerator_requests/' + arq['uuid']))
    helpers.assert_error(admin.get('/accelerator_requests/' + arq['uuid']),
                         404)
    helpers.assert_error(
        admin.delete('/accelerator_requests/' + arq['uuid']), 404)


def test_delete_by_instance(admin, service, stack, fpga, profile2):
    arqs = helpers.create_arqs(admin, profile2)
    inst = helpers.new_uuid()
    assert _bind(service, stack, arqs, fpga, inst).status_code == 202
    url = '/accelerator_requests?instance=' + inst
    helpers.assert_error(admin.delete(url), 403, 'requires a service token')
    assert len(admin.get(url).json()['arqs']) == 2
    helpers.assert_no_content(service.delete(url))
    assert admin.get(url).json() == {'arqs': []}
    for arq in arqs:
        helpers.assert_error(admin.get('/accelerator_requests/'
                                       + arq['uuid']), 404)
    helpers.assert_no_content(service.delete(url))
    helpers.assert_no_content(service.delete(
        '/accelerator_requests?instance=' + helpers.new_uuid()))


@pytest.mark.parametrize('query', [
    '', '?arqs=%(u)s&instance=%(u)s', '?instance=not-a-uuid', '?arqs=',
    '?arqs=,', '?other=1'])
def test_delete_needs_exactly_one_selector(service, query):
    uuid = helpers.new_uuid()
    resp = service.delete('/accelerator_requests' + query % {'u': uuid})
    helpers.assert_error(resp, 400)


def test_delete_path_and_query_is_400(admin, profile):
    arq = helpers.create_arqs(admin, profile)[0]
    resp = admin.delete('/accelerator_requests/%s?arqs=%s'
                        % (arq['uuid'], arq['uuid']))
    helpers.assert_error(resp, 400)
    assert _show(admin, arq['uuid']) == arq


def test_delete_bound_arq_needs_service_token_and_frees_handle(
        admin, service, stack, instance):
    """Host 1's FPGA has 16 handles. After a bound ARQ is deleted, 16 new
    ARQs can all bind to it, and a 17th finds none free."""
    fpga1 = stack.deployable('FPGA', 1)
    one = helpers.create_profile(admin, [{'resources:FPGA': '1'}])['name']
    arq = helpers.create_arqs(admin, one)[0]
    assert _bind(service, stack, [arq], fpga1, instance()).status_code == 202
    for path in ('/accelerator_requests/' + arq['uuid'],
                 '/accelerator_requests?arqs=' + arq['uuid']):
        helpers.assert_error(admin.delete(path), 403, 'service token')
    assert _show(admin, arq['uuid'])['state'] == 'Bound'
    helpers.assert_no_content(
        service.delete('/accelerator_requests/' + arq['uuid']))
    helpers.assert_error(admin.get('/accelerator_requests/' + arq['uuid']),
                         404)

    sixteen = helpers.create_profile(admin, [{'resources:FPGA': '16'}])
    arqs = helpers.create_arqs(admin, sixteen['name'])
    assert len(arqs) == 16
    inst = instance()
    assert _bind(service, stack, arqs, fpga1, inst).status_code == 202
    bound = admin.get('/accelerator_requests?instance=' + inst).json()['arqs']
    assert len(bound) == 16
    for a in bound:
        _assert_bound(a, stack, fpga1, inst)
    assert len({a['attach_handle_uuid'] for a in bound}) == 16

    extra = helpers.create_arqs(admin, one)[0]
    resp = _bind(service, stack, [extra], fpga1, instance())
    helpers.assert_error(resp, 409, 'no free attach handle')
    assert _show(admin, extra['uuid'])['state'] == 'BindFailed'


# --- project isolation ------------------------------------------------

def test_project_isolation(admin, service, stack, fpga, profile, instance):
    alice = stack.client(cyborg_api.member('proj-alice'))
    bob = stack.client(cyborg_api.member('proj-bob'))
    bob_service = stack.client(helpers.member_service('proj-bob'))
    arq = helpers.create_arqs(alice, profile)[0]
    bobs = helpers.create_arqs(bob, profile)[0]

    helpers.assert_error(bob.get('/accelerator_requests/' + arq['uuid']),
                         404)
    listed = [a['uuid'] for a in bob.get('/accelerator_requests').json()[
        'arqs']]
    assert arq['uuid'] not in listed and bobs['uuid'] in listed
    assert {a['project_id'] for a in bob.get(
        '/accelerator_requests').json()['arqs']} == {'proj-bob'}
    helpers.assert_error(bob.delete('/accelerator_requests/' + arq['uuid']),
                         404)
    helpers.assert_error(
        bob.delete('/accelerator_requests?arqs=%s,%s' % (bobs['uuid'],
                                                         arq['uuid'])),
        404, arq['uuid'])
    assert _show(bob, bobs['uuid']) == bobs
    helpers.assert_error(_bind(bob_service, stack, [arq], fpga, instance()),
                         404)
    assert _show(alice, arq['uuid']) == arq

    everything = [a['uuid'] for a in admin.get('/accelerator_requests')
                  .json()['arqs']]
    assert {arq['uuid'], bobs['uuid']} <= set(everything)
    assert _show(admin, arq['uuid']) == arq
    mine = [a['uuid'] for a in alice.get('/accelerator_requests').json()[
        'arqs']]
    assert arq['uuid'] in mine and bobs['uuid'] not in mine


def test_member_binds_own_arq_with_service_token(stack, fpga, profile,
                                                 instance):
    carol = stack.client(helpers.member_service('proj-carol'))
    arq = helpers.create_arqs(carol, profile)[0]
    inst = instance()
    assert _bind(carol, stack, [arq], fpga, inst).status_code == 202
    bound = _show(carol, arq['uuid'])
    _assert_bound(bound, stack, fpga, inst)
    assert bound['project_id'] == 'proj-carol'
    plain = stack.client(cyborg_api.member('proj-carol'))
    helpers.assert_error(plain.delete('/accelerator_requests/' + arq['uuid']),
                         403, 'service token')
    helpers.assert_no_content(
        carol.delete('/accelerator_requests/' + arq['uuid']))


def test_arq_uuids_in_another_form_find_the_same_arqs(admin, service, stack,
                                                      fpga, profile,
                                                      instance):
    """Upper case in the path, the PATCH body and ?arqs=: the same ARQ,
    as its canonical form finds it; one ARQ named twice is a 400."""
    arq = helpers.create_arqs(admin, profile)[0]['uuid']
    assert admin.get('/accelerator_requests/' + arq.upper()).json()[
        'uuid'] == arq
    inst = instance()
    assert _bind(service, stack, [arq.upper()], fpga, inst).status_code \
        == 202
    assert admin.get('/accelerator_requests/' + arq).json()[
        'state'] == 'Bound'
    twice = dict(cyborg_api.unbind_patch([arq]),
                 **cyborg_api.unbind_patch([arq.upper()]))
    helpers.assert_error(service.patch('/accelerator_requests', json=twice),
                         400, 'twice')
    assert service.delete('/accelerator_requests?arqs=' + arq.upper()
                          ).status_code == 204
    helpers.assert_error(admin.get('/accelerator_requests/' + arq), 404)


def test_role_names_are_read_without_case(stack, profile):
    """oslo.policy compares role names without case; so does the rest:
    ``Admin`` sees every project's ARQs as ``admin`` does, ``MEMBER``
    reads its own as ``member`` does."""
    shouting = stack.client({'X-Project-Id': 'case-project',
                             'X-User-Id': 'case', 'X-Roles': 'MEMBER'})
    created = helpers.create_arqs(shouting, profile)
    listed = shouting.get('/accelerator_requests')
    assert listed.status_code == 200, listed.text
    assert {a['uuid'] for a in listed.json()['arqs']} >= {
        a['uuid'] for a in created}
    admin = stack.client(cyborg_api.ADMIN).get('/accelerator_requests')
    capitalised = stack.client(dict(cyborg_api.ADMIN, **{
        'X-Roles': 'Admin'})).get('/accelerator_requests')
    assert capitalised.status_code == 200
    assert {a['uuid'] for a in capitalised.json()['arqs']} == {
        a['uuid'] for a in admin.json()['arqs']}
