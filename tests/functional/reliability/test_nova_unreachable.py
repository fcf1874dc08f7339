"""Nova's events endpoint is down or answers 5xx.

Binds still complete; each event is tried ``[nova] event_retries`` more
times and then given up; and nova_shim, which then never hears the
event, still builds the guest through its early-exit check of the ARQs.
"""

import time

import requests

from tests.fixtures import cyborg_api
from tests.functional.multiprocess import topology as topo_mod
from tests.functional.reliability import harness

ATTEMPTS = harness.EVENT_RETRIES + 1
# Back-off of the retries (event_retry_delay 0.2 s, doubling), and slack.
RETRY_SECONDS = 0.2 * (2 ** ATTEMPTS) + 5


def _conductor_logs(topology):
    return ''.join(topology.log(p.name + '.log') for p in
                   topology.conductors)


def _bind_one(topology, calls):
    rp_uuid = topology.deployable(harness.RACE_DEP)['rp_uuid']
    resp = calls.do('POST', harness.arq_url(topology.cyborg_url),
                    json={'device_profile_name': harness.PLAIN_DP})
    [arq] = resp.json()['arqs']
    resp = calls.do('PATCH', harness.arq_url(topology.cyborg_url),
                    json=cyborg_api.bind_patch(
                        [arq['uuid']], 'compute1', rp_uuid,
                        harness.new_instance()))
    assert resp.status_code == 202, resp.text
    assert topology.arq_states([arq['uuid']]) == {arq['uuid']: 'Bound'}
    return arq['uuid']


def _boot(topology):
    flavor = {'name': 'rel-accel', 'vcpus': 1, 'ram': 256, 'disk': 1,
              'extra_specs': {'accel:device_profile': 'rel-guest'}}
    headers = dict(topo_mod.HEADERS,
                   **{'OpenStack-API-Version': 'compute 2.82'})
    url = topology.nova_url + '/v2.1/servers'
    resp = requests.post(url, headers=headers, timeout=60, json={
        'server': {'name': 'rel-early-exit', 'flavor': flavor}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']

    def active():
        server = requests.get(url + '/' + server_id, headers=headers,
                              timeout=30).json()['server']
        assert server['status'] != 'ERROR', server
        return server if server['status'] == 'ACTIVE' and \
            not server['OS-EXT-STS:task_state'] else None
    server = harness.wait_for(active, 60)
    try:
        assert server, 'the guest was not built'
        assert [a['state'] for a in server['accelerator_requests']] == \
            ['Bound']
    finally:
        requests.delete(url + '/' + server_id, headers=headers, timeout=30)
        harness.wait_for(lambda: requests.get(
            url + '/' + server_id, headers=headers,
            timeout=30).status_code == 404, 30)


def test_nova_down_or_failing(healthy, results):
    topology = healthy
    recorder = topology.nova_recorder
    calls = harness.Calls()
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    topology.ensure_profile('rel-guest', {
        'resources:FPGA': '1', 'trait:CUSTOM_GUEST': 'required'})
    try:
        # Down: connection refused at every attempt.
        tried = _conductor_logs(topology).count('Nova did not take')
        given_up = _conductor_logs(topology).count('Giving up on')
        recorder.down()
        _bind_one(topology, calls)
        assert harness.wait_for(
            lambda: _conductor_logs(topology).count('Giving up on') >
            given_up, RETRY_SECONDS)
        down_attempts = _conductor_logs(topology).count(
            'Nova did not take') - tried

        # Up, answering 503: the same number of attempts, then no more.
        recorder.mode = 'error'
        recorder.up()
        tag = _bind_one(topology, calls)
        time.sleep(RETRY_SECONDS)
        error_attempts = sum(1 for e in recorder.events('error')
                             if e['tag'] == tag)

        # nova_shim never hears an event, and builds the guest anyway.
        _boot(topology)
        boot_events = len(recorder.events('error'))
        results.update(
            fault='Nova events endpoint down (connection refused), then '
                  'answering 503; a guest built through nova_shim',
            requests=calls.count + 1, errors=len(calls.unclean()), lost=0,
            max_wait=round(harness.max_wait(calls), 1),
            notes='binds completed; %d attempts per event while down, %d '
                  'while 503 (event_retries=%d); guest ACTIVE by early '
                  'exit' % (down_attempts, error_attempts,
                            harness.EVENT_RETRIES))
        assert down_attempts == ATTEMPTS
        assert error_attempts == ATTEMPTS
        assert boot_events > 0
        assert calls.unclean() == []
    finally:
        recorder.mode = 'forward'
        if recorder._server is None:
            recorder.up()
        topology.delete_all_arqs()
