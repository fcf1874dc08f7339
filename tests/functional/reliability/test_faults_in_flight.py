"""No request is stranded by a fault.

Eight clients run Nova's ARQ lifecycle (create, bind with a service
token, ask for the instance's ARQs resolved, delete them) through both
API servers, with ``[api] rpc_timeout`` at its default of 30 s, while:

* conductor-a is SIGKILLed in the middle of calls. So that the kill
  lands mid-call, a lock on the ARQ table holds every conductor's calls
  for a moment, and the kill comes once statements of conductor-a wait
  on it. The API hears within ``[api] rpc_call_monitor_timeout`` that
  those calls are lost (no heartbeat) and sends them again; conductor-b
  answers. Every call succeeds, none waits longer than the bound, and
  every ARQ is accounted for: none left behind, none created twice,
  none stuck. (The creates that conductor-a's database sessions carry
  out after it died are found again by their idempotency keys.)
* RabbitMQ is killed and a fresh node started at once. Every call is
  answered within the bound: success, or a clean 503 while the node is
  not back; lifecycles that failed cleaned up after themselves, so no
  ARQ is left, stuck or duplicated, and full throughput comes back.

And an FPGA programming that lasts longer than the monitor timeout (a
slow program command) completes through its conductor's beats; one that
no conductor takes is never run, and one whose conductor is killed is
known within the bound.
"""

import os
import threading
import time
import uuid

from tests.functional.reliability import harness

LOST_AFTER = 3            # [api] rpc_call_monitor_timeout (the default)


def _plain_profile(topology):
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})


def _data_problems(topology, load, orphans_allowed):
    """Everything wrong in what the database holds after the load."""
    check = load.check()
    problems = (['ARQ %s left behind' % u for u in check['left']] +
                ['orphan ARQ %(uuid)s is %(state)s' % r
                 for r in check['bad']] +
                topology.check_invariants() + harness.half_written(topology))
    if len(check['orphans']) > orphans_allowed:
        problems.append('%d ARQs no client knows of, %d creates failed: %s'
                        % (len(check['orphans']), orphans_allowed,
                           check['orphans']))
    return problems, check['orphans']


def test_conductor_killed_mid_call(healthy, results):
    topology = healthy
    _plain_profile(topology)
    calls = harness.Calls(limit=harness.CONDUCTOR_FAULT_BOUND +
                          harness.LOADED_MACHINE)
    [victim] = [p for p in topology.conductors if p.name == 'conductor-a']
    try:
        with harness.Lifecycles(topology, calls) as load:
            time.sleep(2)
            with harness.arqs_locked(topology):
                # Two or more: the stuck-bind sweep alone waits with one.
                waiting = harness.wait_for(
                    lambda: harness.statements_waiting(topology,
                                                       victim.pid) >= 2
                    and harness.statements_waiting(topology, victim.pid),
                    15, interval=0.05)
                topology.kill_conductor('conductor-a')
                time.sleep(0.5)
            # Long enough for every lost call to be sent again.
            time.sleep(2 * harness.CONDUCTOR_FAULT_BOUND)
        problems, _ = _data_problems(topology, load, 0)
        failed = [r for r in calls.records if not r['ok']]
        # Answered a monitor timeout or more after they were sent: lost
        # with conductor-a, then answered by conductor-b.
        stranded = [r for r in calls.records
                    if r['seconds'] >= LOST_AFTER - 0.5]
        results.update(
            fault='SIGKILL conductor-a in the middle of calls (%d of its '
                  'statements waiting on a lock on the ARQ table), 8 '
                  'clients running ARQ lifecycles; rpc_timeout 30 s'
                  % (waiting or 0),
            requests=calls.count, errors=len(calls.unclean()) + len(failed),
            lost=len(problems), max_wait=round(harness.max_wait(calls), 1),
            notes='%d lifecycles, %d failed; %d calls lost with '
                  'conductor-a, sent again when their first attempt went '
                  'unheard for %d s, and answered by conductor-b (slowest '
                  '%.1f s); no 503; no ARQ left, stuck or created twice'
                  % (len(load.completed), len(load.failures),
                     len(stranded), LOST_AFTER, harness.max_wait(calls)))
        assert waiting, 'conductor-a had no calls in flight'
        assert calls.unclean() == [], calls.unclean()[:5]
        assert failed == [] and load.failures == [], (failed[:5],
                                                      load.failures[:5])
        assert stranded, 'no call was lost with conductor-a'
        assert problems == []
    finally:
        if not any(p.name == 'conductor-a' for p in topology.conductors):
            topology.restart_conductor('conductor-a')
        topology.delete_all_arqs()


def test_broker_restarted_under_load(healthy, results):
    topology = healthy
    _plain_profile(topology)
    calls = harness.Calls(limit=harness.BROKER_FAULT_BOUND +
                          harness.LOADED_MACHINE)
    try:
        with harness.Lifecycles(topology, calls) as load:
            time.sleep(4)
            fault = time.monotonic()
            baseline = load.per_second(fault - 3, fault)
            topology.servers.kill_rabbit()
            topology.servers.start_rabbit()
            back = time.monotonic()
            full = harness.wait_for(
                lambda: load.full_throughput_at(back, baseline), 60,
                interval=0.5)
            time.sleep(2)
        problems, orphans = _data_problems(topology, load,
                                           load.failed_creates)
        unavailable = [r for r in calls.records if r['status'] == 503]
        after = [r for r in calls.records if r['ok'] and
                 r['seconds'] >= LOST_AFTER - 0.5]
        results.update(
            fault='RabbitMQ killed (SIGKILL) and a fresh node started at '
                  'once, 8 clients running ARQ lifecycles; rpc_timeout '
                  '30 s',
            requests=calls.count, errors=len(calls.unclean()),
            lost=len(problems), max_wait=round(harness.max_wait(calls), 1),
            notes='%d lifecycles, %d failed (%d creates); %d calls '
                  'answered 503, %d answered 2xx after a wait of %d s or '
                  'more; the new node listened %.1f s after the kill, '
                  'and lifecycles ran at full rate (%.0f/s) again %s; '
                  '%d ARQs created for creates answered 503, deleted' % (
                      len(load.completed), len(load.failures),
                      load.failed_creates, len(unavailable), len(after),
                      LOST_AFTER, back - fault, baseline,
                      '%.1f s after it listened' % (full - back)
                      if full else 'never', len(orphans)))
        assert calls.unclean() == [], calls.unclean()[:5]
        assert problems == []
        assert full, 'lifecycles did not come back to full rate'
    finally:
        topology.delete_all_arqs()


def test_a_long_programming_answers_when_it_ends(healthy, results):
    topology = healthy
    seconds = 2 * LOST_AFTER + 1
    calls = harness.Calls(limit=seconds + harness.BROKER_FAULT_BOUND)
    bitstream = str(uuid.uuid4())
    with open(os.path.join(topology.tmp, bitstream), 'wb') as f:
        f.write(b'bitstream')
    dep = topology.deployable(harness.RACE_DEP)
    topology.set_program_delay(seconds)
    try:
        resp = calls.do('PATCH', '%s/v2/deployables/%s/program' % (
            topology.cyborg_url, dep['uuid']), json=[{
                'op': 'replace', 'path': '/program',
                'value': [{'image_uuid': bitstream}]}])
    finally:
        topology.set_program_delay(0)
    results.update(
        fault='none: an FPGA program that takes %d s (the call monitor '
              'timeout is %d s; its conductor beats once a second)'
              % (seconds, LOST_AFTER),
        requests=calls.count, errors=len(calls.unclean()), lost=0,
        max_wait=round(harness.max_wait(calls), 1),
        notes='answered %s after %.1f s' % (
            resp.status_code if resp is not None else 'nothing',
            harness.max_wait(calls)))
    assert resp is not None and resp.status_code == 200, calls.records
    assert topology.rows('SELECT bitstream_id FROM deployables WHERE '
                         'uuid = :u', u=dep['uuid']) == [
        {'bitstream_id': bitstream}]


def _program(topology, calls, dep, bitstream):
    return calls.do('PATCH', '%s/v2/deployables/%s/program' % (
        topology.cyborg_url, dep['uuid']), ok=(200,), json=[{
            'op': 'replace', 'path': '/program',
            'value': [{'image_uuid': bitstream}]}])


def _program_requests(topology, dep):
    return topology.rows('SELECT state, image_uuid FROM program_requests '
                         'WHERE deployable_uuid = :u', u=dep['uuid'])


def test_a_programming_no_conductor_takes_never_runs(healthy, results):
    """Both conductors are down when the API is asked to program: it
    answers 503, and the conductors, started again, program nothing (the
    request's messages expired; none was taken)."""
    topology = healthy
    dep = topology.deployable(harness.RACE_DEP)
    before = topology.rows('SELECT bitstream_id FROM deployables WHERE '
                           'uuid = :u', u=dep['uuid'])
    requests_before = _program_requests(topology, dep)
    bitstream = str(uuid.uuid4())
    # The start is sent again for [api] rpc_fault_timeout (9 s), then
    # given up in one more call.
    calls = harness.Calls(limit=9 + LOST_AFTER + harness.LOADED_MACHINE)
    for name in ('conductor-a', 'conductor-b'):
        topology.kill_conductor(name)
    try:
        resp = _program(topology, calls, dep, bitstream)
    finally:
        for name in ('conductor-a', 'conductor-b'):
            topology.restart_conductor(name)
    time.sleep(2 * LOST_AFTER)
    agents = ''.join(p.read_output() for p in topology.agents)
    results.update(
        fault='both conductors down while the API is asked to program',
        requests=calls.count, errors=len(calls.unclean()), lost=0,
        max_wait=round(harness.max_wait(calls), 1),
        notes='answered %s; programmed after the conductors came back: %s'
              % (resp.status_code if resp is not None else 'nothing',
                 'yes' if bitstream in agents else 'no'))
    assert resp is not None and resp.status_code == 503, calls.records
    assert calls.unclean() == [], calls.records
    assert bitstream not in agents
    assert _program_requests(topology, dep) == requests_before
    assert topology.rows('SELECT bitstream_id FROM deployables WHERE '
                         'uuid = :u', u=dep['uuid']) == before


def test_a_conductor_killed_mid_programming_is_known_within_seconds(
        healthy, results):
    """The conductor that programs is SIGKILLed: its beats stop, and
    the API answers 503, saying that the FPGA may or may not hold the
    bitstream, within the conductor fault bound of the kill."""
    topology = healthy
    dep = topology.deployable(harness.RACE_DEP)
    bitstream = str(uuid.uuid4())
    with open(os.path.join(topology.tmp, bitstream), 'wb') as f:
        f.write(b'bitstream')
    calls = harness.Calls(limit=60)
    answer = {}
    topology.set_program_delay(8)
    worker = threading.Thread(target=lambda: answer.update(
        resp=_program(topology, calls, dep, bitstream)))
    worker.start()
    try:
        started_on = harness.wait_for(lambda: [
            p for p in topology.conductors
            if 'Program request' in p.read_output()
            and bitstream in p.read_output()], 30, interval=0.05)
        [victim] = started_on
        time.sleep(1)
        killed = time.monotonic()
        topology.kill_conductor(victim.name)
        worker.join(timeout=60)
        answered = time.monotonic() - killed
    finally:
        topology.set_program_delay(0)
        worker.join(timeout=60)
    topology.restart_conductor(victim.name)
    resp = answer.get('resp')
    results.update(
        fault='SIGKILL of the conductor that programs, 1 s into an 8 s '
              'programming',
        requests=calls.count, errors=0, lost=0,
        max_wait=round(harness.max_wait(calls), 1),
        notes='answered %s %.1f s after the kill' % (
            resp.status_code if resp is not None else 'nothing', answered))
    assert resp is not None, calls.records
    assert resp.status_code == 503, resp.text
    assert 'may or may not hold bitstream %s' % bitstream in resp.text
    assert answered <= harness.CONDUCTOR_FAULT_BOUND + \
        harness.LOADED_MACHINE, answered
    # The request stays as its conductor left it.
    assert {'state': 'programming', 'image_uuid': bitstream} in \
        _program_requests(topology, dep)
