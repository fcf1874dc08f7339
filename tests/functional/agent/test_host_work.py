"""Bind-time host work through the API, on an all-in-one of two hosts.

``compute1`` runs the fake driver, whose FPGA is programmed by a small
script set as ``[agent] fpga_program_command``; ``compute2`` runs the
``nvidia_gpu`` driver on a copy of the ``t4_vgpu`` sysfs tree with vGPU
type ``nvidia-223`` enabled. The kernel behind that tree is emulated with
``tests.fixtures.sysfs_tree``. Nova is a small HTTP server that
records the external events it receives.
"""

import logging
import os
import stat
import time
import uuid

import pytest
import sqlalchemy as sa

from cyborg_lite.allinone import hosts as allinone_hosts
from cyborg_lite.agent import programming
from cyborg_lite.agent import service as agent_service
from cyborg_lite.conductor import service as conductor_service
from cyborg_lite import context
from cyborg_lite.db import binding
from cyborg_lite.db import models
from tests.fixtures import cyborg_api
from tests.fixtures import nova_events
from tests.fixtures import sysfs_tree

GPU = '0000:af:00.0'
VGPU_TYPE = 'nvidia-223'


@pytest.fixture(scope='module')
def nova():
    with nova_events.RecordingNova() as server:
        yield server


@pytest.fixture(scope='module')
def tree(tmp_path_factory):
    return sysfs_tree.copy_tree('t4_vgpu', tmp_path_factory.mktemp('sysfs'))


@pytest.fixture(scope='module')
def stack(tmp_path_factory, nova, tree):
    overrides = {('nova', 'auth_type'): 'none',
                 ('nova', 'endpoint_override'): nova.url,
                 ('agent', 'bitstream_dir'): str(
                     tmp_path_factory.mktemp('bitstreams'))}
    gpu_host = {('agent', 'enabled_drivers'): ['nvidia_gpu'],
                ('agent', 'sysfs_root'): tree,
                ('gpu_devices', 'enabled_vgpu_types'): [VGPU_TYPE]}
    with cyborg_api.CyborgStack(tmp_path_factory.mktemp('stack'), hosts=2,
                                overrides=overrides,
                                host_overrides={1: gpu_host}) as s:
        yield s


@pytest.fixture
def service(stack):
    return stack.client(cyborg_api.SERVICE)


def _agent(stack, index):
    hostname = stack.aio.hostnames[index]
    return [a for a in stack.aio.agents if a.hostname == hostname][0]


def _deployable(stack, index, rc):
    hostname = stack.aio.hostnames[index]
    for dep in stack.client().get('/deployables').json()['deployables']:
        if dep['name'].startswith(hostname + '_') and \
                '"%s"' % rc in dep['attributes_list']:
            return dep
    raise LookupError('no %s deployable on %s' % (rc, hostname))


def _arq(service, groups):
    name = 'dp-%s' % uuid.uuid4().hex[:8]
    resp = service.post('/device_profiles',
                        json=[{'name': name, 'groups': groups}])
    assert resp.status_code == 201, resp.text
    resp = service.post('/accelerator_requests',
                        json={'device_profile_name': name})
    assert resp.status_code == 201, resp.text
    return resp.json()['arqs'][0]['uuid']


def _bind(service, stack, arq, index, dep):
    instance = str(uuid.uuid4())
    resp = service.patch('/accelerator_requests', json=cyborg_api.bind_patch(
        [arq], stack.aio.hostnames[index], dep['rp_uuid'], instance))
    return resp, instance


def _show(service, arq):
    return service.get('/accelerator_requests/%s' % arq).json()


def _wait_resolved(service, arq, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        shown = _show(service, arq)
        if shown['state'] != 'BindStarted':
            return shown
        assert time.monotonic() < deadline, 'bind never resolved'
        time.sleep(0.05)


def _events_for(nova, arq, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in nova.events if e['tag'] == arq]
        if found:
            return found
        time.sleep(0.05)
    return []


def _handles_in_use(stack, dep):
    with stack.aio.db.reader() as session:
        return session.scalar(
            sa.select(sa.func.count()).select_from(models.AttachHandle)
            .join(models.Deployable,
                  models.AttachHandle.deployable_id == models.Deployable.id)
            .where(models.Deployable.uuid == dep['uuid'],
                   models.AttachHandle.in_use.is_(True)))


def _type_file(tree, name):
    path = os.path.join(tree, 'bus/pci/devices', GPU,
                        'mdev_supported_types', VGPU_TYPE, name)
    with open(path) as f:
        return f.read().strip()


def test_vgpu_bind_creates_and_removes_the_mdev(stack, nova, service, tree):
    dep = _deployable(stack, 1, 'VGPU')
    assert dep['num_accelerators'] == 8
    arq = _arq(service, [{'resources:VGPU': '1'}])
    resp, instance = _bind(service, stack, arq, 1, dep)
    assert resp.status_code == 202, resp.text
    shown = _show(service, arq)
    assert shown['state'] == 'Bound'
    assert shown['attach_handle_type'] == 'MDEV'
    assert shown['attach_handle_info']['asked_type'] == VGPU_TYPE
    handle = shown['attach_handle_uuid']
    # The right host's agent asked the kernel for the mdev.
    assert _type_file(tree, 'create') == handle
    mdev = sysfs_tree.kernel_create_mdev(tree, GPU, VGPU_TYPE)
    assert mdev == handle
    assert _events_for(nova, arq)[0]['status'] == 'completed'
    # The created mdev still counts: the inventory does not change.
    assert _agent(stack, 1).report() == {'changed': False}

    resp = service.delete('/accelerator_requests?arqs=%s' % arq)
    assert resp.status_code == 204, resp.text
    remove = os.path.join(tree, 'bus/mdev/devices', handle, 'remove')
    with open(remove) as f:
        assert f.read().strip() == '1'
    sysfs_tree.kernel_remove_mdev(tree, handle)
    assert _handles_in_use(stack, dep) == 0


def _program_script(tmp_path, body):
    path = os.path.join(str(tmp_path), 'program.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n' + body + '\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def program_with(stack, tmp_path):
    conf = _agent(stack, 0).conf

    def set_script(body, timeout=600):
        conf.set_override('fpga_program_command',
                          _program_script(tmp_path, body), group='agent')
        conf.set_override('fpga_program_timeout', timeout, group='agent')
    yield set_script
    conf.clear_override('fpga_program_command', group='agent')
    conf.clear_override('fpga_program_timeout', group='agent')


def _fpga_bind(stack, service):
    dep = _deployable(stack, 0, 'FPGA')
    bitstream = str(uuid.uuid4())
    arq = _arq(service, [{'resources:FPGA': '1',
                          'accel:bitstream_id': bitstream}])
    resp, _ = _bind(service, stack, arq, 0, dep)
    assert resp.status_code == 202, resp.text
    return dep, arq, bitstream


def test_fpga_program_success(stack, nova, service, program_with):
    program_with('sleep 0.5; exit 0')
    dep, arq, bitstream = _fpga_bind(stack, service)
    assert _show(service, arq)['state'] == 'BindStarted'
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'Bound'
    assert shown['attach_handle_type'] == 'PCI'
    deployable = service.get('/deployables/%s' % dep['uuid']).json()
    assert deployable['bitstream_id'] == bitstream
    assert [e['status'] for e in _events_for(nova, arq)] == ['completed']
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_fpga_program_longer_than_an_rpc_timeout(stack, nova, service,
                                                 program_with):
    """The conductor waits for a programming as long as the agent lets
    it run ([agent] fpga_program_timeout), not an RPC call's default
    timeout."""
    stack.aio.conf.set_override('rpc_response_timeout', 1)
    try:
        program_with('sleep 2; exit 0', timeout=10)
        dep, arq, bitstream = _fpga_bind(stack, service)
        shown = _wait_resolved(service, arq)
    finally:
        stack.aio.conf.clear_override('rpc_response_timeout')
    assert shown['state'] == 'Bound', shown
    assert [e['status'] for e in _events_for(nova, arq)] == ['completed']
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_fpga_program_failure(stack, nova, service, program_with):
    program_with('echo "bad bitstream" >&2; exit 3')
    dep, arq, _ = _fpga_bind(stack, service)
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'BindFailed'
    assert shown['attach_handle_uuid'] is None
    assert _handles_in_use(stack, dep) == 0
    assert [e['status'] for e in _events_for(nova, arq)] == ['failed']
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_fpga_program_timeout(stack, nova, service, program_with):
    program_with('sleep 30', timeout=1)
    dep, arq, _ = _fpga_bind(stack, service)
    assert _show(service, arq)['state'] == 'BindStarted'
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'BindFailed'
    assert _handles_in_use(stack, dep) == 0
    assert [e['status'] for e in _events_for(nova, arq)] == ['failed']
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_nova_hears_at_once_only_of_binds_it_may_wait_for(
        stack, nova, service, program_with):
    """A bind resolved before its call answers is one Nova finds
    resolved and never waits for: its event waits for company, up to
    [nova] resolved_events_wait. An FPGA programmed after its call
    answered is one Nova may be waiting for: its event goes within
    events_wait, and takes the waiting ones with it."""
    conf = stack.aio.conf
    conf.set_override('resolved_events_wait', 30, group='nova')
    try:
        dep = _deployable(stack, 0, 'FPGA')
        early = _arq(service, [{'resources:FPGA': '1'}])
        resp, _ = _bind(service, stack, early, 0, dep)
        assert resp.status_code == 202, resp.text
        assert _show(service, early)['state'] == 'Bound'
        assert _events_for(nova, early, timeout=1.0) == []

        program_with('exit 0')
        started = time.monotonic()
        _, late, _ = _fpga_bind(stack, service)
        assert _wait_resolved(service, late)['state'] == 'Bound'
        assert [e['status'] for e in _events_for(nova, late)] == \
            ['completed']
        assert time.monotonic() - started < 10
        last_post = [e['tag'] for e in nova.posts[-1][2]['events']]
        assert last_post == [early, late]
    finally:
        conf.clear_override('resolved_events_wait', group='nova')
    for arq in (early, late):
        service.delete('/accelerator_requests?arqs=%s' % arq)


def test_binds_on_both_hosts(stack, service, tree):
    fpga, vgpu = _deployable(stack, 0, 'FPGA'), _deployable(stack, 1, 'VGPU')
    a1 = _arq(service, [{'resources:FPGA': '1'}])
    a2 = _arq(service, [{'resources:VGPU': '1'}])
    assert _bind(service, stack, a1, 0, fpga)[0].status_code == 202
    assert _bind(service, stack, a2, 1, vgpu)[0].status_code == 202
    s1, s2 = _show(service, a1), _show(service, a2)
    assert (s1['state'], s2['state']) == ('Bound', 'Bound')
    assert s1['hostname'] == stack.aio.hostnames[0]
    assert s2['hostname'] == stack.aio.hostnames[1]
    assert _type_file(tree, 'create') == s2['attach_handle_uuid']
    sysfs_tree.kernel_create_mdev(tree, GPU, VGPU_TYPE)
    for arq in (a1, a2):
        assert service.delete('/accelerator_requests?arqs=%s'
                              % arq).status_code == 204
    sysfs_tree.kernel_remove_mdev(tree, s2['attach_handle_uuid'])


def test_agent_refuses_to_start_without_its_compute_node(stack):
    conf = stack.aio.host_conf('nowhere.cyborg-lite.test')
    conf.set_override('resource_provider_startup_retries', 2, group='agent')
    conf.set_override('resource_provider_startup_delay', 0.01,
                      group='agent')
    agent = agent_service.AgentService(conf, stack.aio.transport,
                                       hostname='nowhere.cyborg-lite.test')
    with pytest.raises(agent_service.ComputeNodeMissing) as err:
        agent.start()
    assert 'nowhere.cyborg-lite.test' in str(err.value)
    assert 'resource_provider_name' in str(err.value)
    assert agent._server is None

    # Once nova-compute has registered the node, the agent starts.
    allinone_hosts.register_compute_nodes(conf, ['nowhere.cyborg-lite.test'])
    agent.start(report_loop=False)
    try:
        assert agent.check_placement()['name'] == 'nowhere.cyborg-lite.test'
    finally:
        agent.stop()


def test_an_mdev_the_kernel_will_not_remove_is_a_502_and_changes_nothing(
        stack, service, tree):
    """The kernel refuses to remove the mdev (its ``remove`` cannot be
    written: a device still busy): the unbind and the delete answer 502
    naming the host, not 500, and the ARQ keeps its handle, to be
    deleted once the host lets go."""
    dep = _deployable(stack, 1, 'VGPU')
    arq = _arq(service, [{'resources:VGPU': '1'}])
    resp, _instance = _bind(service, stack, arq, 1, dep)
    assert resp.status_code == 202, resp.text
    handle = _show(service, arq)['attach_handle_uuid']
    sysfs_tree.kernel_create_mdev(tree, GPU, VGPU_TYPE)
    remove = os.path.join(tree, 'bus/mdev/devices', handle, 'remove')
    os.unlink(remove)
    os.mkdir(remove)    # busy: the write fails
    try:
        resp = service.patch('/accelerator_requests',
                             json=cyborg_api.unbind_patch([arq]))
        assert resp.status_code == 502, resp.text
        assert stack.aio.hostnames[1] in resp.text
        resp = service.delete('/accelerator_requests?arqs=%s' % arq)
        assert resp.status_code == 502, resp.text
        assert _show(service, arq)['state'] == 'Bound'
    finally:
        os.rmdir(remove)
        open(remove, 'w').close()
    assert service.delete('/accelerator_requests?arqs=%s'
                          % arq).status_code == 204
    sysfs_tree.kernel_remove_mdev(tree, handle)
    assert _handles_in_use(stack, dep) == 0


def test_a_vgpu_bind_on_a_host_whose_agent_is_gone_fails_within_seconds(
        stack, service):
    """The agent does not answer the mdev creation: the bind fails (409,
    the ARQ BindFailed) once the agent's heartbeats are missed, well
    before the RPC timeout, and so does not hold back the calls sent in
    one message with it."""
    dep = _deployable(stack, 1, 'VGPU')
    arq = _arq(service, [{'resources:VGPU': '1'}])
    agent = _agent(stack, 1)
    agent.stop()
    try:
        started = time.monotonic()
        resp, _instance = _bind(service, stack, arq, 1, dep)
        elapsed = time.monotonic() - started
        assert resp.status_code == 409, resp.text
        assert elapsed < stack.aio.conf.api.rpc_timeout / 2, elapsed
        assert _show(service, arq)['state'] == 'BindFailed'
    finally:
        stack.aio.agents.remove(agent)
        stack.aio.start_agent(stack.aio.hostnames[1])
    assert service.delete('/accelerator_requests?arqs=%s'
                          % arq).status_code == 204
    assert _handles_in_use(stack, dep) == 0


def _started_bind(stack, service):
    """An FPGA bind a conductor started and was lost with: BindStarted,
    holding a handle, its bitstream not programmed, and read as worked
    on long ago. ``(arq, bind result, fields)``."""
    dep = _deployable(stack, 0, 'FPGA')
    arq = _arq(service, [{'resources:FPGA': '1',
                          'accel:bitstream_id': str(uuid.uuid4())}])
    fields = {'hostname': stack.aio.hostnames[0],
              'device_rp_uuid': dep['rp_uuid'],
              'instance_uuid': str(uuid.uuid4()), 'project_id': None}
    started = binding.bind(stack.aio.db, arq, fields, None, [arq])
    assert not started.finished and started.bitstream_id
    return arq, started, fields


def test_the_sweep_takes_over_a_bind_whose_conductor_was_lost(
        stack, nova, service, program_with):
    """A bind left in BindStarted past bind_timeout is finished by the
    sweep (the FPGA programmed again), not failed: Nova hears that it
    completed."""
    program_with('exit 0')
    arq, started, _ = _started_bind(stack, service)
    assert binding.leave_bind(stack.aio.db, arq, started.handle['id'])
    assert stack.aio.conductor.arqs.sweep() == 1
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'Bound'
    assert shown['attach_handle_uuid'] == started.handle['uuid']
    assert [e['status'] for e in _events_for(nova, arq)] == ['completed']
    # Nothing is left for the next sweep.
    assert stack.aio.conductor.arqs.sweep() == 0
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_a_taken_over_bind_whose_programming_fails_fails(
        stack, nova, service, program_with):
    program_with('echo "bad bitstream" >&2; exit 3')
    arq, started, _ = _started_bind(stack, service)
    dep = _deployable(stack, 0, 'FPGA')
    assert binding.leave_bind(stack.aio.db, arq, started.handle['id'])
    assert stack.aio.conductor.arqs.sweep() == 1
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'BindFailed'
    assert _handles_in_use(stack, dep) == 0
    assert [e['status'] for e in _events_for(nova, arq)] == ['failed']
    service.delete('/accelerator_requests?arqs=%s' % arq)


def test_a_stopping_conductor_leaves_its_programmings_to_the_sweep(
        stack, nova, service, program_with, tmp_path, caplog):
    """A conductor that stops while an agent programs an FPGA for one of
    its binds leaves the bind to the next sweep, which takes it over at
    once instead of after bind_timeout, and the bind ends Bound. The
    take-over's programming joins the one still running on the agent:
    the tool runs once."""
    caplog.set_level(logging.INFO, logger=programming.__name__)
    runs, release = tmp_path / 'runs', tmp_path / 'release'
    program_with('echo run >> %s; n=0; while [ ! -e %s ]; do '
                 'n=$((n + 1)); [ $n -gt 400 ] && exit 7; sleep 0.05; done'
                 % (runs, release))
    arq, started, fields = _started_bind(stack, service)
    stopping = conductor_service.ConductorService(
        stack.aio.conf, stack.aio.transport, db=stack.aio.db)
    stopping.arqs._finish_host_work(
        context.RequestContext.admin(), arq, fields, started.handle,
        started.bitstream_id, [])
    deadline = time.monotonic() + 10
    while arq not in stopping.arqs._programming or not runs.exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # Not stuck while its conductor works on it...
    assert stack.aio.conductor.arqs.sweep() == 0
    stopping.stop()
    # ...left to the sweep once it stops.
    assert stack.aio.conductor.arqs.sweep() == 1
    deadline = time.monotonic() + 10
    while 'joining that run' not in caplog.text:
        assert time.monotonic() < deadline, 'the take-over never joined'
        time.sleep(0.01)
    release.touch()
    shown = _wait_resolved(service, arq)
    assert shown['state'] == 'Bound'
    assert {e['status'] for e in _events_for(nova, arq)} == {'completed'}
    assert runs.read_text().split() == ['run']
    service.delete('/accelerator_requests?arqs=%s' % arq)
