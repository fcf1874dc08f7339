"""``cyborg-lite-status upgrade check`` on a SQLite file (no servers)."""

from cyborg_lite.cmd import status
from cyborg_lite.cmd import dbsync


def _conf(tmp_path, policy=None):
    lines = ['[database]', 'connection = sqlite:///%s' % (tmp_path / 'db')]
    if policy is not None:
        (tmp_path / 'policy.yaml').write_text(policy)
        lines += ['[oslo_policy]',
                  'policy_file = %s' % (tmp_path / 'policy.yaml')]
    path = tmp_path / 'c.conf'
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def test_no_schema_fails_then_upgrade_passes(tmp_path, capsys):
    conf = _conf(tmp_path)
    assert status.main(['--config-file', conf, 'upgrade', 'check']) == 2
    out = ' '.join(capsys.readouterr().out.replace('|', ' ').split())
    assert 'no schema' in out
    assert 'Database sqlite:///' in out
    assert dbsync.main(['--config-file', conf, 'upgrade']) == 0
    assert status.main(['--config-file', conf, 'upgrade', 'check']) == 0


def test_policy_file_unknown_rule_warns_and_bad_yaml_fails(tmp_path, capsys):
    conf = _conf(tmp_path, policy='"no:such_rule": ""\n')
    dbsync.main(['--config-file', conf, 'upgrade'])
    capsys.readouterr()
    assert status.main(['--config-file', conf, 'upgrade', 'check']) == 1
    assert 'no:such_rule' in capsys.readouterr().out
    (tmp_path / 'policy.yaml').write_text('a: [\n')
    assert status.main(['--config-file', conf, 'upgrade', 'check']) == 2
