"""Pure parts of nova_shim.compute: events, states, flavors, the DB."""

import threading

import pytest

from nova_shim.compute.events import InstanceEvents
from nova_shim.compute import flavors
from nova_shim.compute import states
from nova_shim import conf as shim_conf
from nova_shim.db import api as db_api
from nova_shim.db import migration
from nova_shim import exception

KEY = ('accelerator-request-bound', 'arq-1')


def test_event_delivered_from_another_thread():
    events = InstanceEvents()
    waiter = events.prepare('i-1', [KEY, ('accelerator-request-bound', 'b')])
    waiter.exit_early(('accelerator-request-bound', 'b'), 'completed')
    threading.Timer(0.05, events.deliver,
                    ('i-1', KEY[0], KEY[1], 'completed')).start()
    assert waiter.wait(5) == {KEY: 'completed',
                              ('accelerator-request-bound', 'b'): 'completed'}
    assert not events.deliver('i-1', KEY[0], KEY[1], 'completed')


def test_event_wait_times_out_and_unknown_events_are_dropped():
    events = InstanceEvents()
    waiter = events.prepare('i-1', [KEY])
    assert not events.deliver('i-2', KEY[0], KEY[1], 'completed')
    assert not events.deliver('i-1', KEY[0], 'other', 'completed')
    with pytest.raises(exception.InstanceEventTimeout, match='arq-1'):
        waiter.wait(0.05)


def test_api_status():
    assert states.api_status(states.BUILDING, states.SCHEDULING) == 'BUILD'
    assert states.api_status(states.STOPPED, None) == 'SHUTOFF'
    assert states.api_status(states.ACTIVE,
                             states.REBOOTING_HARD) == 'HARD_REBOOT'
    # As Nova's _STATE_MAP: a reboot shows only on an ACTIVE server.
    assert states.api_status(states.STOPPED,
                             states.REBOOTING_HARD) == 'SHUTOFF'
    assert states.api_status(states.PAUSED,
                             states.REBOOTING_HARD) == 'PAUSED'
    assert states.api_status(states.ERROR, states.REBOOTING_HARD) == 'ERROR'
    assert states.api_status(states.STOPPED, states.REBUILDING) == 'REBUILD'
    assert states.api_status(states.ERROR,
                             states.REBUILD_SPAWNING) == 'REBUILD'
    assert states.api_status(states.SHELVED, states.REBUILDING) == 'SHELVED'
    # A move, as Nova shows it: RESIZE while it runs (from ACTIVE or
    # STOPPED), VERIFY_RESIZE when done, REVERT_RESIZE while reverted.
    for vm_state in (states.ACTIVE, states.STOPPED):
        for task in (states.RESIZE_PREP, states.RESIZE_MIGRATING,
                     states.RESIZE_MIGRATED, states.RESIZE_FINISH):
            assert states.api_status(vm_state, task) == 'RESIZE'
    assert states.api_status(states.RESIZED, None) == 'VERIFY_RESIZE'
    assert states.api_status(states.RESIZED,
                             states.RESIZE_REVERTING) == 'REVERT_RESIZE'
    assert states.api_status(states.RESIZED,
                             states.RESIZE_CONFIRMING) == 'VERIFY_RESIZE'


def test_flavors_from_config_and_inline():
    conf = shim_conf.build_conf()
    seeded = {f.name: f for f in flavors.configured(conf)}
    assert seeded['m1.tiny'].vcpus == 1
    assert seeded['m1.tiny'].flavorid == flavors.seed_id('m1.tiny')
    with pytest.raises(exception.InvalidRequest):
        flavors.from_dict({'vcpus': 1, 'extra_specs': {'k': ['list']}})
    inline = flavors.from_dict({'vcpus': 2, 'ram': 128, 'disk': 1,
                                'extra_specs': {'accel:device_profile': 'dp'}})
    assert inline.device_profile == 'dp'
    with pytest.raises(exception.InvalidRequest):
        flavors.from_dict({'ram': 1})


def test_db_compare_and_swap(tmp_path):
    database = db_api.Database('sqlite:///%s' % (tmp_path / 'i.sqlite'))
    migration.upgrade(database.engine)
    inst = database.create(
        uuid='u1', name='vm', project_id='p', user_id='u',
        flavor={'vcpus': 1, 'memory_mb': 64, 'disk_gb': 1,
                'extra_specs': {'accel:device_profile': 'dp'}},
        vm_state=states.ACTIVE, task_state=None)
    assert inst.device_profile == 'dp' and inst.arq_uuids == []
    inst = database.update('u1', expected_task_state=None,
                           expected_vm_states={states.ACTIVE},
                           task_state=states.PAUSING, arq_uuids=['a'])
    assert inst.arq_uuids == ['a']
    with pytest.raises(exception.InstanceInvalidState, match='pausing'):
        database.update('u1', expected_task_state=None, action='pause',
                        task_state=states.PAUSING)
    database.delete('u1')
    with pytest.raises(exception.InstanceNotFound):
        database.get('u1')
