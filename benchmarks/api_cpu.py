"""The API's own CPU per ARQ lifecycle, without HTTP, RPC or a database.

The production benchmark's figures move with the machine's hour more
than a change to the API's code moves them. This one calls the API's
WSGI application (every middleware, Pecan, policy, validation, views)
in this process, with a conductor client that answers each call at once
from a dict, and measures this thread's CPU time per lifecycle: POST,
bind PATCH (with a service token), ``GET ?instance=&bind_state=resolved``
and ``DELETE ?instance=``, as Nova sends them. The HTTP server, the RPC
client and the conductor are not in it; they cost the same whatever the
API's code does.
"""

import io
import json
import statistics
import sys
import time
import uuid

from cyborg_lite import conf as cyborg_conf
from cyborg_lite import states
from cyborg_lite.api import app as api_app

ROUNDS = 7
LIFECYCLES_PER_ROUND = 1500
WARMUP = 300
HEADERS = {'HTTP_X_SERVICE_ROLES': 'service', 'HTTP_X_PROJECT_ID': 'bench',
           'HTTP_X_USER_ID': 'bench', 'HTTP_X_ROLES': 'member,reader',
           'HTTP_ACCEPT': 'application/json', 'HTTP_HOST': '127.0.0.1'}
RP_UUID = str(uuid.uuid4())


class ImmediateConductor:
    """The conductor calls of a lifecycle, answered from a dict."""

    def __init__(self):
        self.arqs = {}

    def arq_create(self, ctx, device_profile_name, idempotency_key=None):
        arq = {'uuid': str(uuid.uuid4()), 'state': states.INITIAL,
               'device_profile_name': device_profile_name,
               'device_profile_group_id': 0, 'hostname': None,
               'device_rp_uuid': None, 'instance_uuid': None,
               'project_id': ctx.project_id, 'attach_handle_type': '',
               'attach_handle_info': {}, 'attach_handle_uuid': None,
               'created_at': '2026-01-01T00:00:00.000000+00:00',
               'updated_at': None}
        self.arqs[arq['uuid']] = arq
        return [dict(arq)]

    def arq_bind(self, ctx, bindings, repeat=False):
        for arq_uuid, fields in bindings.items():
            self.arqs[arq_uuid].update(
                fields, state=states.BOUND, attach_handle_type='PCI',
                attach_handle_info={'domain': '0000', 'bus': '0c',
                                    'device': '00', 'function': '1'})

    def arq_list(self, ctx, instance_uuid=None, bind_state=None):
        return [dict(arq) for arq in self.arqs.values()
                if arq['instance_uuid'] == instance_uuid]

    def arq_delete(self, ctx, uuids=None, instance_uuid=None, repeat=False):
        for arq_uuid in [u for u, arq in self.arqs.items()
                         if arq['instance_uuid'] == instance_uuid]:
            del self.arqs[arq_uuid]


def _call(app, method, path, query='', body=None):
    data = b'' if body is None else json.dumps(body).encode()
    environ = dict(HEADERS, REQUEST_METHOD=method, PATH_INFO=path,
                   QUERY_STRING=query, SERVER_NAME='127.0.0.1',
                   SERVER_PORT='80', SERVER_PROTOCOL='HTTP/1.1',
                   CONTENT_LENGTH=str(len(data)))
    environ.update({'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(data),
                    'wsgi.errors': sys.stderr, 'wsgi.multithread': True,
                    'wsgi.multiprocess': True, 'wsgi.run_once': False})
    if body is not None:
        environ['CONTENT_TYPE'] = 'application/json'
    statuses = []
    answer = b''.join(app(environ, lambda status, headers, exc=None:
                          statuses.append(status)))
    return int(statuses[0].split()[0]), answer


def _lifecycle(app):
    path = '/v2/accelerator_requests'
    instance = str(uuid.uuid4())
    status, answer = _call(app, 'POST', path,
                           body={'device_profile_name': 'bench'})
    arqs = json.loads(answer)['arqs'] if status == 201 else []
    patch = {arq['uuid']: [
        {'op': 'add', 'path': '/hostname', 'value': 'bench-host'},
        {'op': 'add', 'path': '/device_rp_uuid', 'value': RP_UUID},
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}]
        for arq in arqs}
    statuses = (status,
                _call(app, 'PATCH', path, body=patch)[0],
                _call(app, 'GET', path, 'instance=%s&bind_state=resolved'
                      % instance)[0],
                _call(app, 'DELETE', path, 'instance=%s' % instance)[0])
    if statuses != (201, 202, 200, 204):
        raise RuntimeError('lifecycle answered %s' % (statuses,))


def run(rounds=ROUNDS, lifecycles=LIFECYCLES_PER_ROUND):
    """Median and lowest CPU milliseconds per lifecycle over ``rounds``."""
    conf = cyborg_conf.build_conf(
        overrides={('api', 'auth_strategy'): 'noauth'})
    app = api_app.setup_app(conf, conductor=ImmediateConductor())
    for _ in range(WARMUP):
        _lifecycle(app)
    per_round = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(lifecycles):
            _lifecycle(app)
        per_round.append((time.thread_time() - started) / lifecycles * 1e3)
    return {'system': "the API's WSGI application in this process, a "
                      'conductor client answering at once; no HTTP, RPC '
                      'or database',
            'lifecycles_per_round': lifecycles, 'rounds': rounds,
            'cpu_ms_per_lifecycle_median': round(
                statistics.median(per_round), 3),
            'cpu_ms_per_lifecycle_min': round(min(per_round), 3)}
