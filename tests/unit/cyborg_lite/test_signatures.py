"""Pecan and oslo.policy still route and check as before once
:func:`cyborg_lite.api.signatures.memoize` remembers what they inspect."""

import pecan
import pecan.routing
import pytest
import webtest

from cyborg_lite.api import signatures


class _Child:
    @pecan.expose('json', route='custom-path')
    def custom(self):
        return {'via': 'custom route'}

    @pecan.expose('json')
    def plain(self, name=None):
        return {'via': 'plain', 'name': name}


class _Clash:
    @pecan.expose('json', route='taken')
    def first(self):
        return {}

    @pecan.expose('json', route='taken')
    def second(self):
        return {}


class _Root:
    child = _Child()
    clash = _Clash()


@pytest.fixture
def app():
    signatures.memoize()
    return webtest.TestApp(pecan.make_app(_Root()))


def test_custom_segments_route_every_time(app):
    for _ in range(3):
        assert app.get('/child/custom-path').json == {'via': 'custom route'}
        assert app.get('/child/plain?name=x').json == {'via': 'plain',
                                                       'name': 'x'}
    assert _Child in pecan.routing.__observed_controllers__


def test_clashing_custom_segments_are_still_refused(app):
    with pytest.raises(RuntimeError, match='conflicting custom path'):
        app.get('/clash/taken')


def test_detection_runs_once_per_class():
    class Fresh:
        pass

    seen = []

    def record(obj):
        seen.append(type(obj))
        pecan.routing.__observed_controllers__.add(type(obj))

    detect = signatures._segments_detected_once(record)
    try:
        for _ in range(3):
            detect(Fresh())
    finally:
        pecan.routing.__observed_controllers__.discard(Fresh)
    assert seen == [Fresh]


def test_policy_generic_checks_still_decide_the_same():
    from oslo_config import cfg
    from oslo_policy import policy

    signatures.memoize()
    conf = cfg.ConfigOpts()
    conf([], project='signatures-test', default_config_files=[],
         default_config_dirs=[])
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults([
        policy.RuleDefault('literal', "'gold':%(tier)s"),
        policy.RuleDefault('owner', 'project_id:%(project_id)s')])
    creds = {'project_id': 'p1', 'roles': []}
    for _ in range(3):
        assert enforcer.enforce('literal', {'tier': 'gold'}, creds)
        assert not enforcer.enforce('literal', {'tier': 'lead'}, creds)
        assert enforcer.enforce('owner', {'project_id': 'p1'}, creds)
        assert not enforcer.enforce('owner', {'project_id': 'p2'}, creds)
