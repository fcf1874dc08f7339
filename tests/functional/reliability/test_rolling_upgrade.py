"""A rolling upgrade under load, with the previous release's own
conductor.

The conductor of ``PREVIOUS_RELEASE`` (conductor RPC API 1.3, which
records no version in the services table and does not answer
``conductor_versions``), taken from this repository's history and run
from its own tree with this tree's libraries, serves beside today's API
servers and agents while 8 clients run Nova's ARQ lifecycle through a
load balancer that sends each request to an API server in rotation (one
is taken out of rotation while it restarts, as an operator drains a
node). The steps, as the admin guide gives them:

1. the previous release's conductors on today's schema (its migrations
   only expand, so the old conductors keep working on it);
2. the API servers set to ``[upgrade_levels] conductor = auto`` and
   restarted: they find a conductor that records no version and cap
   their calls at 1.3;
3. the conductors replaced by today's one at a time;
4. the API servers restarted: ``auto`` now reads today's version from
   the conductors' records.

No lifecycle fails at any step, no ARQ or attach handle is left in a
broken state, and the old conductors did serve part of the load. (The
forms of each call below 1.2, for conductors older than the previous
release, are tested in ``tests/functional/conductor/test_rpc_versions.py``.)
"""

import itertools
import re
import shutil
import subprocess
import threading
import time

import pytest

from cyborg_lite.conductor import rpcapi
from tests.functional.reliability import harness
from tests.functional.reliability import servers

# The previous release: conductor RPC API 1.3 (2026-12-02).
PREVIOUS_RELEASE = '80d60bc590d7864b09ff1aee7626afd2ed9c4d19'
PREVIOUS_VERSION = '1.3'
# Its packages, run from the archive of that commit.
PACKAGES = ('cyborg_lite', 'lite_common')
# Seconds of load at each step, and a drained API server's grace for
# the requests it holds.
STEP_SECONDS = 6
DRAIN_SECONDS = 2


@pytest.fixture(scope='module')
def previous_release(tmp_path_factory):
    """The previous release's packages, from git."""
    root = servers.ROOT
    if shutil.which('git') is None or subprocess.run(
            ['git', '-C', root, 'cat-file', '-e',
             PREVIOUS_RELEASE + '^{commit}'],
            capture_output=True).returncode != 0:
        pytest.skip('the repository history (commit %s) is not here'
                    % PREVIOUS_RELEASE[:7])
    tree = str(tmp_path_factory.mktemp('previous-release'))
    archive = subprocess.run(
        ['git', '-C', root, 'archive', PREVIOUS_RELEASE] + list(PACKAGES),
        capture_output=True, check=True).stdout
    subprocess.run(['tar', '-x', '-C', tree], input=archive, check=True)
    return tree


class BalancedLifecycles(harness.Lifecycles):
    """The lifecycle clients, each request sent to the next API server
    in ``rotation`` (a load balancer's round robin)."""

    def __init__(self, topology, calls, threads=8):
        super().__init__(topology, calls, threads=threads)
        self.rotation = [topology.cyborg_url, topology.builtin_url]
        self._turn = itertools.count()
        self._rotation_lock = threading.Lock()

    def _do(self, method, url, ok, **kwargs):
        for base in (self.topology.cyborg_url, self.topology.builtin_url):
            if url.startswith(base):
                with self._rotation_lock:
                    chosen = self.rotation[next(self._turn) %
                                           len(self.rotation)]
                url = chosen + url[len(base):]
                break
        return super()._do(method, url, ok, **kwargs)

    def drain(self, url):
        with self._rotation_lock:
            self.rotation.remove(url)
        time.sleep(DRAIN_SECONDS)

    def restore(self, url):
        with self._rotation_lock:
            self.rotation.append(url)


def _restart_apis(topology, load):
    for url in (topology.builtin_url, topology.cyborg_url):
        load.drain(url)
        topology.restart_api(url)
        load.restore(url)


def _replace_conductor(topology, name, code=None):
    topology.stop_conductor(name)
    topology.restart_conductor(name, code)


def _served(topology, name):
    """Binds that conductor ``name`` took since it last started."""
    log = topology.log(name + '.log')
    started = log.rfind('listening on topic')
    return len(re.findall(r'Initial -> (?:BindStarted|Bound)', log[started:]))


def test_rolling_upgrade_from_the_previous_release(healthy, results,
                                                    previous_release):
    topology = healthy
    topology.ensure_profile(harness.PLAIN_DP, {
        'resources:FPGA': '1', 'trait:CUSTOM_RACE': 'required'})
    calls = harness.Calls()
    load = BalancedLifecycles(topology, calls)
    steps = []

    def step(name):
        time.sleep(STEP_SECONDS)
        steps.append((name, len(load.completed), len(load.failures)))

    old_served = {}
    log_start = {name: len(topology.log(name))
                 for name in ('conductor-a.log', 'conductor-b.log',
                              'api.log', 'api-builtin.log')}
    try:
        with load:
            step('today\'s release')
            # One at a time, as any restart: a conductor stopped under
            # load leaves the calls it was sent unanswered for the call
            # monitor timeout, and the API sends them again to the
            # others.
            _replace_conductor(topology, 'conductor-a', previous_release)
            step('conductor-a of the previous release')
            _replace_conductor(topology, 'conductor-b', previous_release)
            step('both conductors of the previous release')
            topology.set_api_options('upgrade_levels', {'conductor': 'auto'})
            _restart_apis(topology, load)
            step('API servers capped by auto')
            # The upgrade: conductors one at a time, then the API
            # servers read the cap again.
            old_served['conductor-a'] = _served(topology, 'conductor-a')
            _replace_conductor(topology, 'conductor-a')
            step('conductor-a upgraded')
            old_served['conductor-b'] = _served(topology, 'conductor-b')
            _replace_conductor(topology, 'conductor-b')
            step('conductor-b upgraded')
            _restart_apis(topology, load)
            step('API servers restarted')
        check = load.check()
        problems = topology.check_invariants()
        results.update(
            fault='rolling upgrade from the previous release (conductor '
                  'RPC API %s) under 8 clients: its conductors, API '
                  'servers capped (auto) and restarted, conductors '
                  'replaced one at a time, API servers restarted'
                  % PREVIOUS_VERSION,
            requests=calls.count, errors=len(calls.unclean()),
            lost=len(check['left']) + len(check['bad']) + len(problems),
            max_wait=round(harness.max_wait(calls), 1),
            notes='%d lifecycles, %d failed; the previous release\'s '
                  'conductors took %d binds; steps: %s' % (
                      len(load.completed), len(load.failures),
                      sum(old_served.values()),
                      '; '.join('%s: %d done' % (n, c)
                                for n, c, _ in steps)))
        assert load.failures == [], (load.failures[:5], steps, [
            (r['method'], r['url'][-40:], r['status'], r['body'][:200])
            for r in calls.records if not r['ok']][:8])
        assert calls.unclean() == [], calls.unclean()[:5]
        assert check['left'] == [] and check['bad'] == []
        assert problems == []
        # Every step completed lifecycles, and the old conductors
        # served binds of their own.
        done = [c for _, c, _ in steps]
        assert all(b > a for a, b in zip([0] + done[:-1], done,
                                          strict=True)), steps
        assert all(count > 0 for count in old_served.values()), old_served
        # No error but the old conductors' refusal of conductor_versions
        # (oslo.messaging logs it with its traceback).
        for name in ('conductor-a', 'conductor-b'):
            logged = topology.log(name + '.log')[log_start[name + '.log']:]
            errors = [line for line in logged.splitlines()
                      if ' ERROR ' in line]
            handled = [line for line in errors
                       if 'Exception during message handling' in line]
            assert all('Attempted method: conductor_versions' in line
                       for line in handled), handled
            assert all(' ERROR oslo_messaging.rpc.server ' in line
                       for line in errors), errors[:5]
        # The API servers found the cap: the old version from a
        # conductor that does not answer conductor_versions, today's
        # from the conductors' records once they were upgraded.
        api_log = ''.join(topology.log(name)[log_start[name]:]
                          for name in ('api.log', 'api-builtin.log'))
        assert ('capped at %s ([upgrade_levels] conductor = auto): a '
                'conductor older than' % PREVIOUS_VERSION) in api_log
        assert ('capped at %s ([upgrade_levels] conductor = auto'
                % rpcapi.RPC_API_VERSION) in api_log
    finally:
        # Leave today's release as the other tests expect it.
        running = {p.name for p in topology.conductors}
        for name in ('conductor-a', 'conductor-b'):
            if topology.conductor_code.get(name) and name in running:
                topology.stop_conductor(name)
                running.discard(name)
            if name not in running:
                topology.restart_conductor(name)
        topology.set_api_options('upgrade_levels', {})
        topology.restart_api(topology.builtin_url)
        topology.restart_api(topology.cyborg_url)
