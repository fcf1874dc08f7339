"""``POST /os-server-external-events`` at compute microversion 2.82.

Runs the compute service alone (its own Placement stub, libvirt's test
driver): events need only the instance database.
"""

import uuid

import pytest
import requests

pytest.importorskip('libvirt')
placement_fixture = pytest.importorskip('placement_stub.fixture')

from nova_shim.service import ComputeService  # noqa: E402
from nova_shim.compute import states  # noqa: E402
from nova_shim import conf as shim_conf  # noqa: E402

V282 = {'OpenStack-API-Version': 'compute 2.82'}
EVENT = 'accelerator-request-bound'


@pytest.fixture(scope='module')
def service(tmp_path_factory):
    with placement_fixture.PlacementFixture() as placement:
        conf = shim_conf.build_conf(overrides={
            (None, 'state_path'): str(tmp_path_factory.mktemp('shim')),
            ('compute', 'hypervisor_hostnames'): ['events-host'],
            ('api', 'auth_strategy'): 'noauth2',
            ('database', 'sync_on_startup'): True,
            ('compute', 'api_port'): 0,
            ('placement', 'auth_type'): 'none',
            ('placement', 'endpoint_override'): placement.endpoint})
        with ComputeService(conf) as service:
            yield service


def instance(service, host):
    return service.deps.db.create(
        uuid=str(uuid.uuid4()), name='vm', project_id='p', user_id='u',
        flavor={'name': 'f', 'vcpus': 1, 'memory_mb': 64, 'disk_gb': 1,
                'extra_specs': {}}, host=host, node=host,
        vm_state=states.BUILDING, task_state=states.SPAWNING).uuid


def post(service, events, headers=V282):
    return requests.post(service.url + '/os-server-external-events',
                         json={'events': events}, headers=headers,
                         timeout=10)


def event(server, tag='arq-1', status='completed'):
    body = {'name': EVENT, 'server_uuid': server, 'status': status}
    if tag is not None:
        body['tag'] = tag
    return body


def test_event_reaches_its_waiter(service):
    server = instance(service, 'events-host')
    waiter = service.deps.events.prepare(server, [(EVENT, 'arq-1')])
    resp = post(service, [event(server)])
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'events': [dict(event(server), code=200)]}
    assert waiter.wait(1) == {(EVENT, 'arq-1'): 'completed'}
    assert resp.headers['OpenStack-API-Version'] == 'compute 2.82'


def test_unknown_instance_is_404_and_207(service):
    known = instance(service, 'events-host')
    unknown = str(uuid.uuid4())
    resp = post(service, [event(known), event(unknown)])
    assert resp.status_code == 207
    codes = [(e['server_uuid'], e['code'], e['status'])
             for e in resp.json()['events']]
    assert codes == [(known, 200, 'completed'), (unknown, 404, 'failed')]


def test_instance_without_host_is_422(service):
    server = instance(service, None)
    known = instance(service, 'events-host')
    resp = post(service, [event(server), event(known)])
    assert resp.status_code == 207
    assert [e['code'] for e in resp.json()['events']] == [422, 200]


def test_no_event_accepted_is_404(service):
    """As Nova: when no event names a known instance with a host, the
    request is a 404."""
    events = [event(instance(service, None)), event(str(uuid.uuid4()))]
    resp = post(service, events)
    assert resp.status_code == 404, resp.text
    assert resp.json()['itemNotFound']['message'] == (
        'No instances found for any event')


def test_tag_is_required(service):
    resp = post(service, [event(instance(service, 'events-host'), tag=None)])
    assert resp.status_code == 400
    assert 'requires a tag' in resp.json()['badRequest']['message']


def test_needs_microversion_2_82(service):
    server = instance(service, 'events-host')
    for headers in ({}, {'OpenStack-API-Version': 'compute 2.81'}):
        resp = post(service, [event(server)], headers=headers)
        assert resp.status_code == 400, resp.text
    resp = post(service, [event(server)],
                headers={'X-OpenStack-Nova-API-Version': '2.82'})
    assert resp.status_code == 200


@pytest.mark.parametrize('bad', [
    [], [{'name': EVENT}], [{'name': 'no-such-event', 'server_uuid': 'x',
                             'tag': 't'}],
    [{'name': EVENT, 'server_uuid': 'x', 'tag': 't', 'status': 'odd'}],
    [{'name': EVENT, 'server_uuid': 'x', 'tag': 't', 'extra': 1}]])
def test_malformed_events_are_400(service, bad):
    assert post(service, bad).status_code == 400


def test_failed_event_stops_the_wait(service):
    server = instance(service, 'events-host')
    waiter = service.deps.events.prepare(server, [(EVENT, 'a'), (EVENT, 'b')])
    assert post(service, [event(server, 'a', 'failed')]).status_code == 200
    assert waiter.wait(5) == {(EVENT, 'a'): 'failed'}


def test_a_microversion_out_of_range_is_406(service):
    """As Nova: a well-formed microversion outside the range served is a
    406, a malformed one a 400."""
    server = instance(service, 'events-host')
    resp = post(service, [event(server)],
                headers={'OpenStack-API-Version': 'compute 2.97'})
    assert resp.status_code == 406, resp.text
    assert 'Version 2.97 is not supported by the API' in resp.json()[
        'computeFault']['message']
    resp = post(service, [event(server)],
                headers={'OpenStack-API-Version': 'compute two'})
    assert resp.status_code == 400, resp.text
