"""A conductor is SIGKILLed while binds are in flight,
FPGA programming binds among them (held by a slow program command).

Every ARQ whose bind was accepted ends Bound: the programming binds the
killed conductor held are taken over by the other conductor's sweep
after ``bind_timeout`` (plus one sweep and one programming), which
programs the FPGA again, and Nova gets a ``completed`` event for each;
no attach handle stays in use without a Bound ARQ. The binds in flight
on the killed conductor are sent again by the API (a repeated bind is
harmless) and succeed on the other one.
"""

import concurrent.futures
import os
import re
import time
import uuid

from tests.fixtures import cyborg_api
from tests.functional.reliability import harness

PROGRAM_ARQS = 6
PLAIN_ARQS = 8
PROGRAM_SECONDS = 3


def _create(topology, calls, profile, count):
    uuids = []
    for i in range(count):
        resp = calls.do('POST', harness.arq_url(
            (topology.cyborg_url, topology.builtin_url)[i % 2]),
            json={'device_profile_name': profile})
        assert resp.status_code == 201, resp.text
        uuids += [a['uuid'] for a in resp.json()['arqs']]
    return uuids


def _bind(topology, calls, rp_uuid, arq_uuid, i):
    instance = harness.new_instance()
    resp = calls.do('PATCH', harness.arq_url(
        (topology.cyborg_url, topology.builtin_url)[i % 2]),
        json=cyborg_api.bind_patch([arq_uuid], 'compute1', rp_uuid,
                                   instance))
    return resp.status_code if resp is not None else None


def test_conductor_killed_mid_bind(healthy, results):
    topology = healthy
    calls = harness.Calls(limit=harness.CONDUCTOR_FAULT_BOUND +
                          harness.LOADED_MACHINE)
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    bitstream = str(uuid.uuid4())
    with open(os.path.join(topology.tmp, bitstream), 'wb') as f:
        f.write(b'bitstream')
    program_dp = 'rel-program-' + bitstream[:8]
    topology.ensure_profile(program_dp, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required',
        'accel:bitstream_id': bitstream})
    rp_uuid = topology.deployable(harness.RACE_DEP)['rp_uuid']
    program = _create(topology, calls, program_dp, PROGRAM_ARQS)
    plain = _create(topology, calls, harness.PLAIN_DP, PLAIN_ARQS)
    topology.set_program_delay(PROGRAM_SECONDS)
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = dict(zip(program, pool.map(
                lambda a: _bind(topology, calls, rp_uuid, *a),
                [(u, i) for i, u in enumerate(program)]), strict=True))
            assert set(codes.values()) == {202}, codes
            started = time.monotonic()
            # Binds in flight as the conductor dies.
            futures = {u: pool.submit(_bind, topology, calls, rp_uuid, u, i)
                       for i, u in enumerate(plain)}
            time.sleep(0.05)
            topology.kill_conductor('conductor-a')
            codes.update({u: f.result() for u, f in futures.items()})
        killed_log = topology.log('conductor-a.log')
        topology.restart_conductor('conductor-a')

        def settled():
            states = topology.arq_states(program + plain)
            return None if 'BindStarted' in states.values() else states
        states = harness.wait_for(
            settled, harness.BIND_TIMEOUT + 4 * harness.SWEEP_INTERVAL + 10)
        elapsed = time.monotonic() - started
        assert states, topology.arq_states(program + plain)
        # The stuck binds were taken over one sweep after bind_timeout,
        # and their FPGAs programmed again.
        assert elapsed <= harness.BIND_TIMEOUT + 3 * harness.SWEEP_INTERVAL \
            + PROGRAM_SECONDS + 5, elapsed

        # The programming binds that the killed conductor held.
        held = set(re.findall(r'arq (\S+): Initial -> BindStarted',
                              killed_log)) & set(program)
        assert held, 'conductor-a took none of the programming binds'
        for arq in program:
            assert states[arq] == 'Bound', (arq, states[arq])
        for arq in plain:
            assert codes[arq] == 202, (arq, codes[arq])
            assert states[arq] == 'Bound', (arq, states[arq])
        problems = topology.check_invariants()
        assert problems == []

        def told():
            events = topology.nova_recorder.events()
            got = {e['tag'] for e in events if e['status'] == 'completed'}
            return held <= got
        notified = harness.wait_for(told, 15)
        missing = held - {e['tag'] for e in
                          topology.nova_recorder.events()
                          if e['status'] == 'completed'}
        repeated = [r for r in calls.records if r['method'] == 'PATCH'
                    and r['seconds'] >= 2.5]
        results.update(
            fault='SIGKILL conductor-a with %d FPGA programming binds '
                  '(%d s program command) and %d binds in flight; '
                  'restart' % (PROGRAM_ARQS, PROGRAM_SECONDS, PLAIN_ARQS),
            requests=calls.count, errors=len(calls.unclean()),
            lost=len(problems) + len(missing),
            max_wait=round(harness.max_wait(calls), 1),
            notes='%d stuck programming binds taken over by the sweep '
                  'and Bound in %.1f s, %d Nova "completed" events for '
                  'them; every in-flight bind answered 202, %d of them '
                  'sent again after conductor-a died' % (
                      len(held), elapsed, len(held) - len(missing),
                      len(repeated)))
        assert notified, missing
        assert calls.unclean() == []
    finally:
        topology.set_program_delay(0)
        topology.delete_all_arqs()
