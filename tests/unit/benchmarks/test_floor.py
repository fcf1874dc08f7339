"""The floor of one lifecycle, added up from the floor's parts."""

import pytest

from benchmarks import floor

RABBIT_CALL = {'p50_ms': 3.78, 'after_idle_p50_ms': 5.21,
               'client_cpu_ms': 1.76, 'server_cpu_ms': 1.92,
               'broker_cpu_ms': 0.98}
GET = {'p50_ms': 2.59, 'client_cpu_ms': 1.25, 'server_cpu_ms': 1.38}


def test_four_calls_and_four_requests_of_every_process():
    result = floor.lifecycle_floor(RABBIT_CALL, GET, cores=2)
    # 4 x (1.76 + 1.92 + 0.98 + 1.25 + 1.38)
    assert result['cpu_ms'] == pytest.approx(29.16)
    assert result['most_lifecycles_per_s'] == pytest.approx(68.6)
    # 4 x (5.21 + 2.59): the calls after idleness, the requests back to
    # back.
    assert result['sequential_ms'] == pytest.approx(31.2)


def test_an_in_process_call_has_one_process():
    # The all-in-one's transport: the caller's CPU is both ends'.
    call = {'p50_ms': 0.3, 'after_idle_p50_ms': 0.5, 'client_cpu_ms': 0.4}
    request = {'p50_ms': 1.0, 'client_cpu_ms': 0.5, 'server_cpu_ms': 0.6}
    result = floor.lifecycle_floor(call, request, cores=4)
    assert result['cpu_ms'] == pytest.approx(6.0)
    assert result['most_lifecycles_per_s'] == pytest.approx(666.7)
    assert result['sequential_ms'] == pytest.approx(6.0)


def _run(concurrency, per_s, p50, errors=0):
    return {'concurrency': concurrency, 'throughput_per_s': per_s,
            'errors': errors, 'steps_ms': {'lifecycle': {'p50': p50}}}


def test_runs_are_set_against_the_floor_of_the_same_run():
    from benchmarks.__main__ import against_floor
    floor_result = {'lifecycle': {'most_lifecycles_per_s': 80.0,
                                  'sequential_ms': 30.0}}
    found = against_floor(floor_result, [_run(1, 25.0, 36.0),
                                         _run(8, 70.0, 100.0)])
    assert found == {
        'throughput_at_8_of_floor': {'value': 0.875, 'target': 0.85,
                                     'met': True},
        'sequential_p50_of_floor': {'value': 1.2, 'target': 1.25,
                                    'met': True}}
    found = against_floor(floor_result, [_run(1, 20.0, 45.0),
                                         _run(8, 70.0, 100.0, errors=1)])
    assert found['throughput_at_8_of_floor']['met'] is False
    assert found['sequential_p50_of_floor'] == {
        'value': 1.5, 'target': 1.25, 'met': False}
