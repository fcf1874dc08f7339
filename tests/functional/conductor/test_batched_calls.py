"""Batched conductor calls through the real conductor over oslo.messaging:
each call of a ``call_batch`` runs in its own caller's context and gets
its own result or error, and concurrent callers of one client share
messages without mixing their answers."""

import threading

import oslo_messaging
import pytest

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite.conductor import rpcapi
from tests.fixtures import cyborg_api

PROFILE = 'batched-fpga'


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack')) as s:
        resp = s.client().post('/device_profiles', json=[{
            'name': PROFILE, 'groups': [{'resources:FPGA': '1'}]}])
        assert resp.status_code == 201, resp.text
        yield s


class CountingConductorAPI(rpcapi.ConductorAPI):
    """The real client, counting the call_batch messages it sends."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.messages = 0

    def call_batch(self, ctx, calls):
        self.messages += 1
        return super().call_batch(ctx, calls)


def _client(stack, batch_size=1):
    return CountingConductorAPI(stack.aio.conf, stack.aio.transport,
                                timeout=30, batch_size=batch_size)


def _member(project):
    return context.RequestContext(project_id=project, roles=['member'])


def _call(ctx, method, **kwargs):
    return {'method': method, 'context': ctx.to_rpc_dict(), 'kwargs': kwargs}


def test_each_batched_call_runs_in_its_own_context(stack):
    client = _client(stack)
    a, b = _member('project-a'), _member('project-b')
    created = client.call_batch(a, [
        _call(a, 'arq_create', device_profile_name=PROFILE),
        _call(b, 'arq_create', device_profile_name=PROFILE),
        _call(b, 'arq_create', device_profile_name='no-such-profile')])
    arq_a = created[0]['result'][0]
    arq_b = created[1]['result'][0]
    assert (arq_a['project_id'], arq_b['project_id']) == ('project-a',
                                                         'project-b')
    assert created[2]['error']['class'] == 'DeviceProfileNotFound'

    read = client.call_batch(b, [
        _call(a, 'arq_get', uuid=arq_a['uuid']),
        _call(b, 'arq_get', uuid=arq_a['uuid']),
        _call(b, 'arq_list')])
    assert read[0]['result']['uuid'] == arq_a['uuid']
    # Project b may not see project a's ARQ, though a's call came first.
    assert read[1]['error']['class'] == 'ARQNotFound'
    assert [arq['uuid'] for arq in read[2]['result']] == [arq_b['uuid']]


@pytest.mark.parametrize('method', ['call_batch', '_arqs', 'target',
                                    'no_such_method'])
def test_a_batch_reaches_only_rpc_methods(stack, method):
    ctx = _member('project-a')
    answer, = _client(stack).call_batch(ctx, [_call(ctx, method)])
    assert answer == {'error': {
        'class': 'UnsupportedVersion',
        'message': 'No batched method %r.' % method}}


def test_concurrent_callers_share_messages_and_keep_their_answers(stack):
    client = _client(stack, batch_size=16)
    failures = []

    def caller(n):
        ctx = _member('caller-%d' % n)
        mine = []
        try:
            for _ in range(15):
                mine.append(client.arq_create(ctx, PROFILE)[0]['uuid'])
                listed = [a['uuid'] for a in client.arq_list(ctx)]
                assert listed == mine
                with pytest.raises(exception.ARQNotFound):
                    client.arq_get(ctx, 'a0000000-0000-4000-8000-%012d' % n)
            client.arq_delete(ctx, uuids=mine)
            assert client.arq_list(ctx) == []
        except Exception as exc:
            failures.append((n, exc))

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    # 8 threads x 47 calls, many of them queued behind another: some
    # travelled together.
    assert client.messages > 0


def test_an_empty_batch_has_no_answers(stack):
    assert _client(stack).call_batch(_member('project-a'), []) == []


def test_a_batched_call_keeps_oslo_messaging_errors(stack):
    """An unexpected conductor error is a RemoteError, batched or not."""
    ctx = _member('project-a')
    answer, = _client(stack).call_batch(ctx, [_call(
        ctx, 'arq_list', no_such_argument=1)])
    assert answer['error']['class'] == 'TypeError'
    error = rpcapi.batching.error_from(answer['error'])
    assert isinstance(error, oslo_messaging.RemoteError)
