"""The conductor RPC version cap: the form each call takes under
``[upgrade_levels] conductor``, and what ``auto`` makes of the versions
the conductors recorded."""

import oslo_messaging
import pytest

from cyborg_lite import exception
from cyborg_lite.conductor import retries
from cyborg_lite.conductor import rpcapi
from cyborg_lite.conductor import version_cap


def _cap(level, ask=None):
    return version_cap.VersionCap(level, rpcapi.RPC_API_VERSION,
                                  rpcapi.VERSIONS, ask or _no_ask)


def _no_ask():
    raise AssertionError('a fixed cap asks no conductor')


def test_without_a_cap_every_call_goes_as_it_is():
    cap = _cap(None)
    kwargs = {'device_profile_name': 'dp', 'idempotency_key': 'k'}
    assert cap.get() is None
    assert cap.form('arq_create', kwargs) == ('1.2', kwargs)
    assert cap.form('deployable_program_start', {}) == ('1.3', {})
    assert cap.repeat_safe('arq_create')


def test_below_1_2_the_lifecycle_goes_in_1_0_forms_and_is_not_repeated():
    cap = _cap('1.1')
    assert cap.form('arq_create', {'device_profile_name': 'dp',
                                   'idempotency_key': 'k'}) == (
        '1.0', {'device_profile_name': 'dp'})
    assert cap.form('arq_bind', {'bindings': {}, 'repeat': False}) == (
        '1.0', {'bindings': {}})
    assert cap.form('arq_delete', {'uuids': ['a'], 'instance_uuid': None,
                                   'repeat': True}) == (
        '1.0', {'uuids': ['a'], 'instance_uuid': None})
    assert cap.form('arq_get', {'uuid': 'a'}) == ('1.0', {'uuid': 'a'})
    # Without the idempotency key or the repeat flag, a repeat of a
    # lost call could create twice or fail; a read may still repeat.
    for method in ('arq_create', 'arq_bind', 'arq_delete'):
        assert not cap.repeat_safe(method)
        assert method in retries.RETRIED
    assert cap.repeat_safe('arq_get')


def test_a_batch_under_1_2_carries_its_calls_in_their_older_forms():
    cap = _cap('1.1')
    version, kwargs = cap.form('call_batch', {'calls': [
        {'method': 'arq_create', 'context': {},
         'kwargs': {'device_profile_name': 'dp', 'idempotency_key': 'k'}},
        {'method': 'arq_get', 'context': {}, 'kwargs': {'uuid': 'a'}}]})
    assert version == '1.1'
    assert [call['kwargs'] for call in kwargs['calls']] == [
        {'device_profile_name': 'dp'}, {'uuid': 'a'}]


def test_a_call_without_an_older_form_is_refused_with_a_503():
    cap = _cap('1.2')
    with pytest.raises(exception.ConductorTooOld) as raised:
        cap.form('deployable_program_start', {})
    assert isinstance(raised.value, exception.ServiceUnavailable)
    assert 'needs conductor RPC API 1.3' in raised.value.message
    assert 'at most 1.2 ([upgrade_levels] conductor)' in raised.value.message
    with pytest.raises(exception.ConductorTooOld):
        _cap('1.0').form('call_batch', {'calls': []})


def test_a_cap_newer_than_this_release_is_this_release():
    assert _cap('9.9').get() == rpcapi.RPC_API_VERSION


def test_auto_takes_the_oldest_recorded_version_once():
    asked = []

    def ask():
        asked.append(1)
        return [{'host': 'c1', 'rpc_version': '1.4', 'updated_at': ''},
                {'host': 'c2', 'rpc_version': '1.2', 'updated_at': ''}]
    cap = _cap('auto', ask)
    assert cap.get() == '1.2'
    with pytest.raises(exception.ConductorTooOld):
        cap.form('deployable_program_status', {'request_id': 'r'})
    assert cap.get() == '1.2'
    assert len(asked) == 1


def test_auto_with_a_conductor_that_records_nothing_is_the_release_before():
    def ask():
        raise oslo_messaging.RemoteError('UnsupportedVersion', 'no 1.4')
    assert _cap('auto', ask).get() == version_cap.UNRECORDED


def test_auto_with_nothing_recorded_yet_asks_again():
    answers = [[], [{'host': 'c1', 'rpc_version': '1.4',
                     'updated_at': ''}]]
    cap = _cap('auto', lambda: answers.pop(0))
    assert cap.get() == version_cap.UNRECORDED
    assert cap.get() == '1.4'
    assert answers == []


def test_auto_keeps_no_answer_after_a_fault():
    faults = [oslo_messaging.MessagingTimeout('lost')]

    def ask():
        if faults:
            raise faults.pop()
        return [{'host': 'c1', 'rpc_version': '1.4', 'updated_at': ''}]
    cap = _cap('auto', ask)
    with pytest.raises(oslo_messaging.MessagingTimeout):
        cap.get()
    assert cap.get() == '1.4'


def test_versions_compare_as_numbers():
    assert version_cap.at_most('1.9', '1.10')
    assert not version_cap.at_most('1.10', '1.9')
    assert version_cap.at_most('2.0', None)
