"""The conductor's Nova notifier against a real HTTP endpoint on loopback."""

import pytest

from cyborg_lite import conf as cyborg_conf
from cyborg_lite.conductor import nova
from tests.fixtures import nova_events


@pytest.fixture
def nova_endpoint():
    with nova_events.RecordingNova() as server:
        yield server


def _bound_arq(number):
    return {'uuid': 'arq-%d' % number, 'instance_uuid': 'vm-%d' % number,
            'state': 'Bound'}


def test_events_reach_nova_and_the_record_of_them_stays_bounded(
        nova_endpoint):
    url = nova_endpoint.url + '/v2.1'
    conf = cyborg_conf.build_conf(
        overrides={('nova', 'endpoint_override'): url,
                   ('nova', 'auth_type'): 'none'})
    notifier = nova.NovaNotifier(conf)
    notifier.start()
    try:
        count = nova.SENT_KEPT + 20
        for number in range(count):
            notifier.notify([_bound_arq(number)])
        notifier.drain()
    finally:
        notifier.stop()

    assert len(nova_endpoint.posts) == count
    path, version, body = nova_endpoint.posts[-1]
    assert path == '/v2.1/os-server-external-events'
    assert version == 'compute 2.82'
    assert body == {'events': [{
        'name': 'accelerator-request-bound', 'server_uuid': 'vm-%d' % (
            count - 1), 'tag': 'arq-%d' % (count - 1),
        'status': 'completed'}]}
    # A long-running conductor keeps only the latest answers.
    assert len(notifier.sent) == nova.SENT_KEPT
    assert notifier.sent[-1] == (body['events'], 200)
