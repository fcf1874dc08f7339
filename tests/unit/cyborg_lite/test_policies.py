"""The policy enforcer follows edits to the policy file, checked at most
once every POLICY_FILES_RECHECK_SECONDS, and remembers its decisions
until the rules change."""

import os
import time

from cyborg_lite import conf as cl_conf
from cyborg_lite import context
from cyborg_lite import policies

RULE = 'cyborg:arq:get_all'


def _enforcer(tmp_path):
    policy_file = tmp_path / 'policy.yaml'
    conf = cl_conf.build_conf(overrides={
        ('oslo_policy', 'policy_file'): str(policy_file)})
    return policies.get_enforcer(conf), policy_file


def _member(project='p1'):
    return context.RequestContext(project_id=project, user_id='u1',
                                  roles=['member', 'reader'])


def _allowed(enforcer, ctx=None):
    return enforcer.allows(RULE, ctx or _member())


def test_defaults_apply_without_a_policy_file(tmp_path):
    enforcer, _ = _enforcer(tmp_path)
    assert _allowed(enforcer)


def test_a_policy_file_edit_takes_effect_after_the_recheck(
        tmp_path, monkeypatch):
    monkeypatch.setattr(policies, 'POLICY_FILES_RECHECK_SECONDS', 0.5)
    enforcer, policy_file = _enforcer(tmp_path)
    assert _allowed(enforcer)

    policy_file.write_text('"%s": "!"\n' % RULE)
    # Within the recheck interval the rules loaded before still apply:
    # the file is not looked for on every check.
    assert _allowed(enforcer)
    time.sleep(0.6)
    assert not _allowed(enforcer)

    policy_file.write_text('"%s": "role:reader"\n' % RULE)
    # Same size and maybe the same mtime second: force a newer mtime.
    later = time.time() + 5
    os.utime(policy_file, (later, later))
    time.sleep(0.6)
    assert _allowed(enforcer)


def test_force_reload_reads_the_file_at_once(tmp_path):
    enforcer, policy_file = _enforcer(tmp_path)
    assert _allowed(enforcer)
    policy_file.write_text('"%s": "!"\n' % RULE)
    enforcer.load_rules(force_reload=True)
    assert not _allowed(enforcer)


def test_decisions_are_remembered_per_caller(tmp_path, monkeypatch):
    enforcer, _ = _enforcer(tmp_path)
    evaluated = []
    enforce = enforcer.enforce

    def counting_enforce(rule, target, creds):
        evaluated.append((rule, creds['project_id'], tuple(creds['roles'])))
        return enforce(rule, target, creds)

    monkeypatch.setattr(enforcer, 'enforce', counting_enforce)
    assert _allowed(enforcer) and _allowed(enforcer)
    assert len(evaluated) == 1
    # Another project, other roles, another scope: decided anew.
    assert _allowed(enforcer, _member('p2'))
    assert not _allowed(enforcer, context.RequestContext(
        project_id='p1', user_id='u1', roles=[]))
    assert not _allowed(enforcer, context.RequestContext(
        user_id='u1', roles=['member', 'reader'], domain_id='d1'))
    assert len(evaluated) == 4
    assert _allowed(enforcer, _member('p2'))
    assert len(evaluated) == 4


def test_remembered_decisions_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(policies, 'MAX_REMEMBERED_DECISIONS', 3)
    enforcer, _ = _enforcer(tmp_path)
    for n in range(10):
        assert _allowed(enforcer, _member('p%d' % n))
        assert len(enforcer._decisions) <= 3
