"""RabbitMQ and PostgreSQL go away under load.

While a server is down the API answers 503 with the error envelope
within the fault bound (a call that cannot reach the broker is tried
again for up to ``[api] rpc_fault_timeout``; never a hang, never a
traceback); once it is back, the same API, conductor and agent processes
work again without a restart, and no ARQ was lost or half-written.
"""

import json
import os
import time

from tests.fixtures import cyborg_api
from tests.functional.reliability import harness

# Seconds each server stays down before it is started again (a fresh
# RabbitMQ node then takes about 12 s more to listen).
BROKER_DOWN = 9
DATABASE_DOWN = 6


def _pids(topology):
    return {p.name: p.pid for p in topology.group.processes}


def _lifecycle(topology):
    """Create, bind, resolve and delete one ARQ: conductors, agents and
    Placement all answer."""
    client = topology.admin()
    rp_uuid = topology.deployable(harness.RACE_DEP)['rp_uuid']
    resp = client.post('/accelerator_requests',
                       json={'device_profile_name': harness.PLAIN_DP})
    assert resp.status_code == 201, resp.text
    [arq] = resp.json()['arqs']
    instance = harness.new_instance()
    resp = client.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq['uuid']], 'compute1', rp_uuid, instance))
    assert resp.status_code == 202, resp.text
    resp = client.get('/accelerator_requests',
                      params={'instance': instance,
                              'bind_state': 'resolved'})
    assert resp.status_code == 200, resp.text
    assert [a['state'] for a in resp.json()['arqs']] == ['Bound']
    resp = client.delete('/accelerator_requests',
                         params={'instance': instance})
    assert resp.status_code == 204, resp.text


def _check_outage(topology, calls, load, pids, results, fault, outage,
                  says=''):
    recovered = harness.api_recovered(topology, calls)
    assert _pids(topology) == pids, 'a process was restarted'
    _lifecycle(topology)
    stored = topology.arq_states(load.created)
    lost = sorted(set(load.created) - set(stored))
    problems = topology.check_invariants() + harness.half_written(topology)
    during = [r for r in calls.records if r['status'] == 503]
    with open(os.path.join(topology.tmp, 'calls-%s.json' % fault.split()[0]),
              'w') as f:
        json.dump(calls.records, f, indent=1)
    results.update(
        fault=fault, requests=calls.count, errors=len(calls.unclean()),
        lost=len(lost) + len(problems),
        max_wait=round(harness.max_wait(calls), 1),
        notes='%d answered 503 (slowest %.1f s); outage %.0f s; both '
              'APIs created ARQs again %.1f s after the load ended (2 s '
              'after the restart), same processes' % (
                  len(during), max((r['seconds'] for r in during),
                                   default=0), outage, recovered))
    assert calls.unclean() == [], calls.unclean()[:5]
    assert during, 'no call failed while the server was down'
    assert all(says in r['body'] for r in during), during[:3]
    assert lost == [] and problems == []


def _outage(topology, results, stop, start, down, fault, **check):
    """Stop a server under create/list load for ``down`` seconds, start
    it again, and check the calls and the data."""
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    pids = _pids(topology)
    calls = harness.Calls()
    try:
        with harness.Load(topology, calls) as load:
            time.sleep(2)
            t0 = time.monotonic()
            stop()
            try:
                time.sleep(down)
            finally:
                start()
            outage = time.monotonic() - t0
            time.sleep(2)
        _check_outage(topology, calls, load, pids, results, fault, outage,
                      **check)
    finally:
        topology.delete_all_arqs()


def test_broker_outage(healthy, results):
    _outage(healthy, results, healthy.servers.kill_rabbit,
            healthy.servers.start_rabbit, BROKER_DOWN,
            'RabbitMQ killed (SIGKILL) under create/list load, then a fresh '
            'node started')


def test_database_outage(healthy, results):
    _outage(healthy, results, healthy.servers.stop_pg,
            healthy.servers.start_pg, DATABASE_DOWN,
            'PostgreSQL stopped (fast shutdown, sessions cut) under '
            'create/list load, then started again',
            says='database is temporarily unavailable')


def test_a_database_restart_fails_no_lifecycle(healthy, results):
    """PostgreSQL restarted (``pg_ctl restart``: a fast shutdown, then a
    start) under 8 lifecycle clients: the calls it cuts run again in
    their conductor (``cyborg_lite.conductor.db_faults``), and no
    lifecycle fails."""
    topology = healthy
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    calls = harness.Calls()
    load = harness.Lifecycles(topology, calls)
    try:
        with load:
            time.sleep(4)
            t0 = time.monotonic()
            topology.servers.restart_pg()
            restart = time.monotonic() - t0
            time.sleep(6)
        check = load.check()
        problems = topology.check_invariants()
    finally:
        topology.delete_all_arqs()
    again = sum(topology.log(name).count('met the database away')
                for name in ('conductor-a.log', 'conductor-b.log'))
    results.update(
        fault='PostgreSQL restarted (fast shutdown, sessions cut) under 8 '
              'lifecycle clients',
        requests=calls.count, errors=len(calls.unclean()),
        lost=len(check['left']) + len(check['bad']) + len(problems),
        max_wait=round(harness.max_wait(calls), 1),
        notes='%d lifecycles, %d failed; the restart took %.1f s; %d '
              'conductor calls ran again after meeting the database away'
              % (len(load.completed), len(load.failures), restart, again))
    assert again > 0, 'no call met the restart'
    assert load.failures == [], (restart, load.failures[:5], [
        (r['method'], r['status'], r['seconds'], r['body'][:200])
        for r in calls.records if not r['ok']][:5])
    assert calls.unclean() == [], calls.unclean()[:5]
    assert check['left'] == [] and check['bad'] == []
    assert problems == []
