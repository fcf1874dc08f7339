"""The API CPU benchmark drives real lifecycles through the API's WSGI
application, and a lifecycle the API does not answer as Nova expects
fails the run rather than being counted."""

import pytest

from benchmarks import api_cpu
from cyborg_lite import conf as cyborg_conf
from cyborg_lite.api import app as api_app


def test_a_short_run_measures_lifecycles():
    result = api_cpu.run(rounds=2, lifecycles=5)
    assert result['rounds'] == 2
    assert 0 < result['cpu_ms_per_lifecycle_min'] <= \
        result['cpu_ms_per_lifecycle_median']


def test_every_lifecycle_leaves_no_arq_behind():
    conductor = api_cpu.ImmediateConductor()
    app = api_app.setup_app(cyborg_conf.build_conf(
        overrides={('api', 'auth_strategy'): 'noauth'}), conductor=conductor)
    for _ in range(3):
        api_cpu._lifecycle(app)
    assert conductor.arqs == {}


def test_a_refused_step_fails_the_run():
    class Unbindable(api_cpu.ImmediateConductor):
        def arq_bind(self, ctx, bindings, repeat=False):
            raise RuntimeError('no bind here')

    app = api_app.setup_app(cyborg_conf.build_conf(
        overrides={('api', 'auth_strategy'): 'noauth'}),
        conductor=Unbindable())
    with pytest.raises(RuntimeError, match='lifecycle answered'):
        api_cpu._lifecycle(app)
