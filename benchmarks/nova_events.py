"""How soon Nova hears of binds when each of its answers is slow.

The conductor's Nova notifier against a loopback Nova endpoint that
takes 100 ms per POST (a Nova API writes each event down before it
answers): 16 binds 5 ms apart, with ``[nova] events_per_request`` 1
(one POST per ARQ) and 100 (the events that queue up meanwhile go
together). Reports the POSTs made and when the last event had arrived.
"""

import time

from cyborg_lite import conf as cyborg_conf
from cyborg_lite.conductor import nova
from tests.fixtures import nova_events

BINDS = 16
BIND_INTERVAL_S = 0.005
NOVA_ANSWER_S = 0.1


class SlowNova(nova_events.RecordingNova):
    """Records each POST, then answers after NOVA_ANSWER_S."""

    def record(self, path, version, body):
        time.sleep(NOVA_ANSWER_S)
        super().record(path, version, body)


def _run(events_per_request):
    with SlowNova() as server:
        conf = cyborg_conf.build_conf(overrides={
            ('nova', 'endpoint_override'): server.url,
            ('nova', 'auth_type'): 'none',
            ('nova', 'events_per_request'): events_per_request})
        notifier = nova.NovaNotifier(conf)
        notifier.start()
        try:
            started = time.monotonic()
            for n in range(BINDS):
                notifier.notify([{'uuid': 'arq-%d' % n, 'state': 'Bound',
                                  'instance_uuid': 'vm-%d' % n}])
                time.sleep(BIND_INTERVAL_S)
            notifier.drain(timeout=60)
            took = time.monotonic() - started
        finally:
            notifier.stop()
        return {'events_per_request': events_per_request,
                'posts': len(server.posts), 'events': len(server.events),
                'last_event_after_s': round(took, 3)}


def run():
    return {'binds': BINDS, 'bind_interval_ms': BIND_INTERVAL_S * 1000,
            'nova_answer_ms': NOVA_ANSWER_S * 1000,
            'runs': [_run(1), _run(100)]}
