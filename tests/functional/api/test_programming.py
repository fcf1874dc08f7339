"""``PATCH /v2/deployables/{uuid}/program`` over HTTP, against the real
conductor, agent and database: a programming answers when it ends,
however long past ``[api] rpc_timeout`` that is; its failure is the
agent's error (502); and what the request was is recorded
(cyborg_lite.db.programs).

The stack's program command waits for a gate file (``<bitstream>.go``)
or fails at once on ``<bitstream>.fail``, so that a test decides how
long a programming lasts and how it ends.
"""

import os
import threading
import time

import oslo_messaging
import pytest
import sqlalchemy as sa

from cyborg_lite import context
from cyborg_lite import exception
from cyborg_lite import states
from cyborg_lite.conductor import rpcapi
from cyborg_lite.db import programs
from tests.fixtures import cyborg_api
from tests.functional.api import helpers

# $2 is the bitstream path. (No "$name": oslo.config would substitute
# it.)
GATE_COMMAND = ("sh -c 'for n in $(seq 600); do [ -e \"$2.go\" ] && exit 0; "
                "[ -e \"$2.fail\" ] && exit 3; sleep 0.05; done; exit 4' "
                "program")
# Far shorter than a programming may last.
RPC_TIMEOUT = 4


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    with helpers.programming_stack(
            tmp_path_factory, GATE_COMMAND,
            overrides={('api', 'rpc_timeout'): RPC_TIMEOUT}) as s:
        yield s


@pytest.fixture
def admin(stack):
    return stack.client(cyborg_api.ADMIN)


def _program(admin, deployable, bitstream):
    return admin.patch('/deployables/%s/program' % deployable['uuid'],
                       json=[{'op': 'replace', 'path': '/program',
                              'value': [{'image_uuid': bitstream}]}])


def _touch_later(stack, name, seconds):
    timer = threading.Timer(seconds, lambda: open(
        os.path.join(stack.bitstream_dir, name), 'w').close())
    timer.start()
    return timer


def _requests(stack, deployable):
    engine = sa.create_engine(stack.aio.conf.database.connection)
    try:
        with engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(sa.text(
                'SELECT state, image_uuid, beats, error FROM '
                'program_requests WHERE deployable_uuid = :d ORDER BY id'),
                {'d': deployable['uuid']})]
    finally:
        engine.dispose()


def test_a_programming_longer_than_the_rpc_timeout_answers_200(stack,
                                                              admin):
    fpga = stack.deployable('FPGA')
    bitstream = helpers.new_uuid()
    seconds = RPC_TIMEOUT + 2
    gate = _touch_later(stack, bitstream + '.go', seconds)
    started = time.monotonic()
    try:
        resp = _program(admin, fpga, bitstream)
    finally:
        gate.cancel()
    took = time.monotonic() - started
    assert resp.status_code == 200, resp.text
    assert took >= seconds
    assert resp.json()['uuid'] == fpga['uuid']
    assert resp.json()['bitstream_id'] == bitstream
    assert admin.get('/deployables/' + fpga['uuid']).json()[
        'bitstream_id'] == bitstream
    [request] = [r for r in _requests(stack, fpga)
                 if r['image_uuid'] == bitstream]
    assert request['state'] == states.PROGRAMMED
    # The conductor beat about once a second while the tool ran.
    assert request['beats'] >= seconds - 2


def test_a_failed_programming_is_the_agents_error(stack, admin):
    fpga = stack.deployable('FPGA')
    before = admin.get('/deployables/' + fpga['uuid']).json()
    bitstream = helpers.new_uuid()
    open(os.path.join(stack.bitstream_dir, bitstream + '.fail'), 'w').close()
    resp = _program(admin, fpga, bitstream)
    message = helpers.assert_error(resp, 502, 'failed', 'exit code 3')
    assert admin.get('/deployables/' + fpga['uuid']).json()[
        'bitstream_id'] == before['bitstream_id']
    [request] = [r for r in _requests(stack, fpga)
                 if r['image_uuid'] == bitstream]
    assert request['state'] == states.PROGRAM_FAILED
    assert request['error'] == message


def test_an_unknown_deployable_is_refused_before_any_request(stack,
                                                            admin):
    """(A GPU's 409 is in test_hostile_input.)"""
    bitstream = helpers.new_uuid()
    absent = {'uuid': helpers.ABSENT_UUID}
    helpers.assert_error(_program(admin, absent, bitstream), 404,
                         helpers.ABSENT_UUID)
    assert _requests(stack, absent) == []


class _LostStart(rpcapi.ConductorAPI):
    """The real conductor client, whose start call is lost: after the
    conductor took it (``reached``), or before."""

    def __init__(self, stack, reached):
        super().__init__(stack.aio.conf, stack.aio.transport, timeout=30)
        self.reached = reached
        self.request_ids = []

    def deployable_program_start(self, ctx, uuid, image_uuid, request_id):
        self.request_ids.append(request_id)
        if self.reached:
            super().deployable_program_start(ctx, uuid, image_uuid,
                                             request_id)
        raise oslo_messaging.MessagingTimeout('the answer was lost')


def test_a_start_whose_answer_was_lost_is_waited_for(stack):
    """The conductor started the programming but its answer never came:
    the API's abandon finds the request started, and the API waits for
    it as for any other."""
    fpga = stack.deployable('FPGA')
    bitstream = helpers.new_uuid()
    open(os.path.join(stack.bitstream_dir, bitstream + '.go'), 'w').close()
    client = _LostStart(stack, reached=True)
    dep = client.deployable_program(context.RequestContext.admin(),
                                    fpga['uuid'], bitstream)
    assert dep['bitstream_id'] == bitstream
    [request] = [r for r in _requests(stack, fpga)
                 if r['image_uuid'] == bitstream]
    assert request['state'] == states.PROGRAMMED


def test_a_start_no_conductor_took_is_given_up_for_good(stack):
    """No conductor took the start: the API gives the request up, and a
    conductor that takes the start later programs nothing."""
    fpga = stack.deployable('FPGA')
    before = stack.client(cyborg_api.ADMIN).get(
        '/deployables/' + fpga['uuid']).json()['bitstream_id']
    bitstream = helpers.new_uuid()
    open(os.path.join(stack.bitstream_dir, bitstream + '.go'), 'w').close()
    client = _LostStart(stack, reached=False)
    ctx = context.RequestContext.admin()
    with pytest.raises(exception.ProgrammingNotStarted) as raised:
        client.deployable_program(ctx, fpga['uuid'], bitstream)
    assert 'nothing was programmed' in raised.value.message
    # The start comes late, with the request id it was sent with.
    late = rpcapi.ConductorAPI(stack.aio.conf, stack.aio.transport,
                               timeout=30)
    assert late.deployable_program_start(
        ctx, fpga['uuid'], bitstream,
        client.request_ids[-1]) == states.PROGRAM_ABANDONED
    time.sleep(0.5)
    assert stack.client(cyborg_api.ADMIN).get(
        '/deployables/' + fpga['uuid']).json()['bitstream_id'] == before
    assert [r for r in _requests(stack, fpga)
            if r['image_uuid'] == bitstream] == []
    assert programs.get(stack.aio.db, client.request_ids[-1])['state'] == \
        states.PROGRAM_ABANDONED
