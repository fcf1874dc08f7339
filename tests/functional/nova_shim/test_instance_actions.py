"""A server's actions and their events (``os-instance-actions``), through
nova_shim's compute API over HTTP on the real chain (see
test_lifecycle_chain), as Nova's API shows them and as ``openstack server
event list`` reads them.

The API records one action per request and server (``create``,
``delete``, each server action by Nova's name), under the request id its
answer carries; a refused request (4xx) leaves none. The events are
recorded by the work itself through ``nova_shim.compute.actions.event``,
driven here directly against the service's database.
"""

import datetime
import hashlib
import os
import re
import subprocess
import sys
import types
import uuid

import pytest
import webob
import yaml

pytest.importorskip('libvirt')
pytest.importorskip('placement_stub.fixture')

from nova_shim.api import app as api  # noqa: E402
from nova_shim.api.handlers import instance_actions  # noqa: E402
from nova_shim.compute import actions  # noqa: E402
from nova_shim.context import RequestContext  # noqa: E402
from nova_shim import exception  # noqa: E402
from tests.functional.nova_shim.test_lifecycle_chain import ADMIN_HEADERS  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import Chain  # noqa
from tests.functional.nova_shim.test_lifecycle_chain import HEADERS  # noqa

OTHER_PROJECT = {'X-Project-Id': 'p-other', 'X-User-Id': 'u-other',
                 'X-Roles': 'member,reader'}
OTHER_ADMIN = {'X-Project-Id': 'p-admin', 'X-User-Id': 'u-root',
               'X-Roles': 'admin,member,reader'}
TIME = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$')
ACTION_KEYS = {'action', 'instance_uuid', 'message', 'project_id',
               'request_id', 'start_time', 'user_id'}
OSC = os.path.join(os.path.dirname(sys.executable), 'openstack')


@pytest.fixture(scope='module')
def chain(tmp_path_factory):
    chain = Chain(tmp_path_factory.mktemp('actions')).start()
    try:
        yield chain
    finally:
        chain.stop()


def _headers(headers=HEADERS, version=None):
    if version is None:
        return headers
    return dict(headers, **{'OpenStack-API-Version': 'compute ' + version})


def boot(chain, name='vm'):
    """A plain server, ACTIVE; its id and the request id of its
    create."""
    resp = chain.api('POST', '/servers', json={'server': {
        'name': name, 'flavor': {'vcpus': 1, 'ram': 64, 'disk': 1}}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    chain.wait(server_id, 'ACTIVE')
    return server_id, resp.headers['x-openstack-request-id']


def act(chain, server_id, body, status=202, headers=HEADERS):
    resp = chain.action(server_id, body, headers=headers)
    assert resp.status_code == status, resp.text
    return resp.headers['x-openstack-request-id']


def list_actions(chain, server_id, headers=HEADERS, version=None,
                 status=200, **params):
    resp = chain.api('GET', '/servers/%s/os-instance-actions' % server_id,
                     headers=_headers(headers, version), params=params)
    assert resp.status_code == status, resp.text
    return resp.json()


def show_action(chain, server_id, request_id, headers=HEADERS,
                version=None, status=200):
    resp = chain.api('GET', '/servers/%s/os-instance-actions/%s' % (
        server_id, request_id), headers=_headers(headers, version))
    assert resp.status_code == status, resp.text
    return resp.json()


def context(request_id=None, project_id='p-demo'):
    return RequestContext(user_id='u-demo', project_id=project_id,
                          request_id=request_id or 'req-' + str(uuid.uuid4()),
                          overwrite=False)


def test_boot_stop_start_are_recorded_under_their_request_ids(chain):
    server_id, create = boot(chain)
    stop = act(chain, server_id, {'os-stop': None})
    start = act(chain, server_id, {'os-start': None})
    listed = list_actions(chain, server_id)['instanceActions']
    assert [(a['action'], a['request_id']) for a in listed] == [
        ('start', start), ('stop', stop), ('create', create)]
    for action in listed:
        assert set(action) == ACTION_KEYS  # no updated_at before 2.58
        assert (action['instance_uuid'], action['user_id'],
                action['project_id'], action['message']) == (
            server_id, 'u-demo', 'p-demo', None)
        assert TIME.match(action['start_time']), action
    assert listed[0]['start_time'] >= listed[1]['start_time'] >= \
        listed[2]['start_time']
    latest = list_actions(chain, server_id, version='2.58')
    assert set(latest) == {'instanceActions'}  # not a full page: no link
    for action in latest['instanceActions']:
        assert set(action) == ACTION_KEYS | {'updated_at'}
        assert TIME.match(action['updated_at'])
        assert action['updated_at'] >= action['start_time']

    shown = show_action(chain, server_id, stop)['instanceAction']
    # Before 2.51 the events are an admin's only.
    assert shown == listed[1]
    assert 'events' not in shown
    assert isinstance(show_action(chain, server_id, stop, version='2.51')[
        'instanceAction']['events'], list)
    assert isinstance(show_action(chain, server_id, stop,
                                  headers=ADMIN_HEADERS)[
        'instanceAction']['events'], list)


def test_each_action_is_named_as_nova_names_it(chain):
    server_id, _create = boot(chain)
    for body, status in (({'os-stop': None}, 202), ({'os-start': None}, 202),
                         ({'reboot': {'type': 'SOFT'}}, 202),
                         ({'pause': None}, 202), ({'unpause': None}, 202)):
        act(chain, server_id, body, status)
    assert [a['action'] for a in list_actions(chain, server_id)[
        'instanceActions']] == ['unpause', 'pause', 'reboot', 'start',
                                'stop', 'create']
    assert instance_actions.ACTION_NAMES['os-migrateLive'] == \
        'live-migration'


def test_multi_create_records_one_action_per_server(chain):
    resp = chain.api('POST', '/servers', json={'server': {
        'name': 'multi', 'min_count': 2,
        'flavor': {'vcpus': 1, 'ram': 64, 'disk': 1}}})
    assert resp.status_code == 202, resp.text
    request_id = resp.headers['x-openstack-request-id']
    servers = [s['id'] for s in chain.api('GET', '/servers', params={
        'reservation_id': chain.show(resp.json()['server']['id'])[
            'OS-EXT-SRV-ATTR:reservation_id']}).json()['servers']]
    assert len(servers) == 2
    for server_id in servers:
        chain.wait(server_id, 'ACTIVE')
        [create] = list_actions(chain, server_id)['instanceActions']
        assert (create['action'], create['request_id']) == ('create',
                                                            request_id)


def test_a_refused_request_leaves_no_action(chain):
    server_id, create = boot(chain)
    act(chain, server_id, {'os-start': None}, 409)  # ACTIVE already
    act(chain, server_id, {'reboot': {}}, 400)  # no type
    act(chain, server_id, {'shelveOffload': None}, 403)  # an admin's
    act(chain, server_id, {'os-stop': None}, 404, headers=OTHER_PROJECT)
    assert [a['request_id'] for a in list_actions(chain, server_id)[
        'instanceActions']] == [create]


def test_refusals_are_what_the_api_answers_with_a_4xx():
    for exc_type, status, _key in api.ERRORS:
        assert issubclass(exc_type, instance_actions.REFUSALS) == (
            status < 500), exc_type


def test_an_operation_that_fails_keeps_its_action(chain):
    server_id, _create = boot(chain)
    manager = types.SimpleNamespace(deps=chain.service.deps)

    def failing(exc):
        raise exc

    for outcome, kept in (
            (exception.HypervisorError(op='stop', instance=server_id,
                                       reason='gone'), True),
            (exception.InstanceInvalidState(
                action='stop', instance_id=server_id, attr='vm_state',
                state='stopped'), False),
            (webob.Response(status=400), False),
            (webob.Response(status=503), True),
            (webob.Response(status=202), True)):
        ctx = context()
        operation = (failing if isinstance(outcome, Exception)
                     else lambda answer: answer)
        try:
            instance_actions.recorded(manager, ctx, server_id, 'stop',
                                      operation, outcome)
        except exception.NovaShimException:
            pass
        recorded = actions.get_action(chain.service.deps, server_id,
                                      ctx.request_id)
        assert (recorded is not None) == kept, outcome


def test_events_are_recorded_with_their_outcome(chain):
    server_id, _create = boot(chain)
    deps = chain.service.deps
    ctx = context()
    actions.record_action(deps, ctx, server_id, 'resize')
    with actions.event(deps, ctx, server_id, 'compute_prep_resize',
                       host='host-a'):
        pass
    with pytest.raises(exception.HypervisorError):
        with actions.event(deps, ctx, server_id, 'compute_resize_instance',
                           host='host-b'):
            raise exception.HypervisorError(op='resize', instance=server_id,
                                            reason='no room')
    with pytest.raises(KeyError):
        with actions.event(deps, ctx, server_id, 'compute_finish_resize'):
            raise KeyError('secret')
    actions.fail_event(deps, ctx, server_id, 'conductor_migrate_server',
                       RuntimeError('late'))

    admin = show_action(chain, server_id, ctx.request_id,
                        headers=ADMIN_HEADERS, version='2.84')[
        'instanceAction']
    assert admin['message'] == 'Error'
    assert admin['action'] == 'resize'
    events = admin['events']
    assert [e['event'] for e in events] == [
        'conductor_migrate_server', 'compute_finish_resize',
        'compute_resize_instance', 'compute_prep_resize']
    assert [e['result'] for e in events] == ['Error', 'Error', 'Error',
                                             'Success']
    for event in events:
        assert set(event) == {'event', 'start_time', 'finish_time', 'result',
                              'traceback', 'host', 'hostId', 'details'}
        assert TIME.match(event['start_time'])
        assert TIME.match(event['finish_time'])
        assert event['finish_time'] >= event['start_time']
    late, secret, failed, prepared = events
    assert 'HypervisorError' in failed['traceback']
    assert failed['traceback'].startswith('Traceback')
    assert 'no room' in failed['details']
    assert failed['host'] == 'host-b'
    assert failed['hostId'] == hashlib.sha224(
        b'p-demo' + b'host-b').hexdigest()
    # Only the message of nova_shim's own exceptions, as Nova.
    assert secret['details'] == 'KeyError'
    assert (late['details'], late['traceback'], late['host'],
            late['hostId']) == ('RuntimeError', None, None, '')
    assert (prepared['traceback'], prepared['details'],
            prepared['host']) == (None, None, 'host-a')

    # A member sees the events (from 2.51) without what is an admin's.
    member = show_action(chain, server_id, ctx.request_id,
                         version='2.84')['instanceAction']
    assert [set(e) for e in member['events']] == [
        {'event', 'start_time', 'finish_time', 'result', 'hostId'}] * 4
    at_251 = show_action(chain, server_id, ctx.request_id,
                         version='2.51')['instanceAction']
    assert set(at_251['events'][0]) == {'event', 'start_time',
                                        'finish_time', 'result'}
    at_262 = show_action(chain, server_id, ctx.request_id,
                         headers=ADMIN_HEADERS, version='2.62')[
        'instanceAction']
    assert set(at_262['events'][0]) == {
        'event', 'start_time', 'finish_time', 'result', 'traceback', 'host',
        'hostId'}
    assert 'events' not in show_action(chain, server_id,
                                       ctx.request_id)['instanceAction']
    listed = list_actions(chain, server_id, version='2.58')
    assert listed['instanceActions'][0]['message'] == 'Error'


def test_an_event_without_its_action_is_not_recorded(chain):
    server_id, _create = boot(chain)
    deps = chain.service.deps
    lonely = context()
    ran = []
    with actions.event(deps, lonely, server_id, 'compute_periodic'):
        ran.append(True)
    assert ran and actions.get_action(deps, server_id,
                                      lonely.request_id) is None
    # An action recorded while its event runs still gets it.
    late = context()
    with actions.event(deps, late, server_id, 'compute_build_instance'):
        actions.record_action(deps, late, server_id, 'create')
    [event] = actions.get_action(deps, server_id, late.request_id,
                                 events=True)['events']
    assert (event['event'], event['result']) == ('compute_build_instance',
                                                 'Success')
    # A context without a request id is given one.
    nameless = RequestContext(user_id='u', project_id='p-demo',
                              overwrite=False)
    nameless.request_id = None
    action = actions.record_action(deps, nameless, server_id, 'stop')
    assert re.match(r'^req-[0-9a-f-]{36}$', action['request_id'])
    assert nameless.request_id == action['request_id']


def test_another_project_sees_no_action(chain):
    server_id, create = boot(chain)
    for headers in (OTHER_PROJECT, dict(OTHER_PROJECT, **{
            'X-Roles': 'reader'})):
        list_actions(chain, server_id, headers=headers, status=404)
        show_action(chain, server_id, create, headers=headers, status=404)
    assert [a['request_id'] for a in list_actions(
        chain, server_id, headers=OTHER_ADMIN)['instanceActions']] == [create]
    show_action(chain, server_id, create, headers=OTHER_ADMIN)


def test_an_unknown_request_id_is_a_404(chain):
    server_id, _create = boot(chain)
    resp = chain.api('GET', '/servers/%s/os-instance-actions/req-nothing'
                     % server_id)
    assert resp.status_code == 404
    assert resp.json() == {'itemNotFound': {
        'code': 404, 'message': 'Action req-nothing not found'}}
    list_actions(chain, str(uuid.uuid4()), status=404)


def test_paging_and_changes_filters(chain):
    server_id, create = boot(chain)
    stop = act(chain, server_id, {'os-stop': None})
    start = act(chain, server_id, {'os-start': None})
    first = list_actions(chain, server_id, version='2.58', limit='2')
    assert [a['request_id'] for a in first['instanceActions']] == [start,
                                                                   stop]
    [link] = first['links']
    assert link['rel'] == 'next'
    assert link['href'].startswith(
        chain.service.url + '/v2.1/servers/%s/os-instance-actions?'
        % server_id)
    assert 'limit=2' in link['href'] and 'marker=' + stop in link['href']
    second = list_actions(chain, server_id, version='2.58', limit='2',
                          marker=stop)
    assert [a['request_id'] for a in second['instanceActions']] == [create]
    assert 'links' not in second
    assert list_actions(chain, server_id, version='2.58', limit='0') == {
        'instanceActions': []}
    # Before 2.58 the query is not read.
    assert len(list_actions(chain, server_id, limit='1', marker='x',
                            whatever='1')['instanceActions']) == 3

    now = datetime.datetime.now(datetime.timezone.utc)
    future = (now + datetime.timedelta(hours=1)).isoformat()
    past = (now - datetime.timedelta(hours=1)).isoformat()
    assert list_actions(chain, server_id, version='2.58',
                        **{'changes-since': future})['instanceActions'] == []
    assert len(list_actions(chain, server_id, version='2.58', **{
        'changes-since': past})['instanceActions']) == 3
    assert len(list_actions(chain, server_id, version='2.66', **{
        'changes-before': future})['instanceActions']) == 3
    assert list_actions(chain, server_id, version='2.66', **{
        'changes-before': past})['instanceActions'] == []

    for version, params in (
            ('2.58', {'marker': 'req-unknown'}),
            ('2.58', {'limit': '-1'}), ('2.58', {'limit': 'x'}),
            ('2.58', {'changes-since': 'yesterday'}),
            ('2.58', {'changes-before': past}),  # from 2.66
            ('2.58', {'sort_key': 'id'}),
            ('2.66', {'changes-since': future, 'changes-before': past})):
        body = list_actions(chain, server_id, version=version, status=400,
                            **params)
        assert body['badRequest']['code'] == 400
    assert list_actions(chain, server_id, version='2.58', status=400,
                        marker='req-unknown')['badRequest']['message'] == \
        'Marker req-unknown could not be found.'


def test_a_deleted_servers_actions_stay_readable(chain):
    server_id, create = boot(chain)
    resp = chain.api('DELETE', '/servers/' + server_id)
    assert resp.status_code == 204, resp.text
    delete = resp.headers['x-openstack-request-id']
    # As Nova: from 2.21, for its project and admins.
    listed = list_actions(chain, server_id, version='2.21')
    assert [(a['action'], a['request_id'])
            for a in listed['instanceActions']] == [('delete', delete),
                                                    ('create', create)]
    show_action(chain, server_id, delete, version='2.21')
    list_actions(chain, server_id, headers=OTHER_ADMIN, version='2.21')
    list_actions(chain, server_id, headers=OTHER_PROJECT, version='2.21',
                 status=404)
    list_actions(chain, server_id, status=404)  # before 2.21


def test_openstack_cli_lists_and_shows_events(chain, tmp_path):
    if not os.path.exists(OSC):
        pytest.skip('python-openstackclient is not installed')
    server_id, create = boot(chain)
    stop = act(chain, server_id, {'os-stop': None})
    deps = chain.service.deps
    ctx = context(request_id=stop)
    with actions.event(deps, ctx, server_id, 'compute_stop_instance',
                       host='nova-shim-compute'):
        pass
    clouds_yaml = tmp_path / 'clouds.yaml'
    clouds_yaml.write_text(yaml.safe_dump({'clouds': {'shim': {
        'auth_type': 'none',
        'compute_endpoint_override': chain.service.url + '/v2.1',
        'compute_api_version': '2.96'}}}))

    def osc(*args):
        result = subprocess.run(
            [OSC, '--os-cloud', 'shim', 'server', 'event'] + list(args) +
            ['-f', 'json'], capture_output=True, text=True, timeout=120,
            env=dict(os.environ, OS_CLIENT_CONFIG_FILE=str(clouds_yaml)))
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return yaml.safe_load(result.stdout)

    listed = osc('list', server_id)
    assert [(e['Request ID'], e['Action']) for e in listed] == [
        (stop, 'stop'), (create, 'create')]
    shown = osc('show', server_id, stop)
    assert shown['action'] == 'stop'
    [event] = shown['events']
    assert (event['event'], event['result'], event['host']) == (
        'compute_stop_instance', 'Success', 'nova-shim-compute')
