"""Where the calls of one ``call_batch`` run: database-only calls in the
RPC thread one after another, calls that may wait on an agent side by
side, and every answer in the order of the calls."""

import concurrent.futures
import threading

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite.conductor import manager


class _Arqs:
    """An ArqService that records the thread of each call; bind and
    delete wait for each other, as two binds waiting on agents would."""

    def __init__(self):
        self.threads = {}
        self.both_waiting = threading.Barrier(2, timeout=10)

    def _record(self, name):
        self.threads[name] = threading.current_thread()

    def create(self, ctx, name, idempotency_key=None):
        self._record('create')
        return [{'uuid': 'created-from-' + name}]

    def list(self, ctx, instance_uuid, bind_state):
        self._record('list')
        raise exception.ARQNotFound(uuid='x')

    def bind(self, ctx, bindings, repeat=False):
        self._record('bind')
        self.both_waiting.wait()

    def delete(self, ctx, uuids=None, instance_uuid=None, repeat=False):
        self._record('delete')
        self.both_waiting.wait()


def _call(method, **kwargs):
    ctx = context.RequestContext(project_id='p', roles=['member'])
    return {'method': method, 'context': ctx.to_rpc_dict(), 'kwargs': kwargs}


def test_database_calls_run_here_and_agent_calls_side_by_side():
    arqs = _Arqs()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        mgr = manager.ConductorManager(None, arqs, None, pool)
        answers = mgr.call_batch(None, [
            _call('arq_bind', bindings={}),
            _call('arq_create', device_profile_name='dp'),
            _call('arq_delete', instance_uuid='i'),
            _call('arq_list')])
    assert answers == [
        {'result': None},
        {'result': [{'uuid': 'created-from-dp'}]},
        {'result': None},
        {'error': {'class': 'ARQNotFound',
                   'message': 'Accelerator request x could not be found.'}}]
    here = threading.current_thread()
    assert arqs.threads['create'] is here
    assert arqs.threads['list'] is here
    # The first call that may wait runs here, the next one beside it.
    assert arqs.threads['bind'] is here
    assert arqs.threads['delete'] is not here


def test_database_only_methods_exist():
    for name in manager.DATABASE_ONLY:
        assert callable(getattr(manager.ConductorManager, name))
