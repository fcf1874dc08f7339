"""``placement-stub-manage db sync`` prepares a database that several
processes then serve with ``[placement] sync_on_startup = false``."""

import webtest

from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import manage


def test_db_sync_then_serve_without_syncing(db_url, tmp_path, capsys):
    conf_file = tmp_path / 'placement-stub.conf'
    conf_file.write_text('[placement_database]\nconnection = %s\n' % db_url)
    assert manage.main(['--config-file', str(conf_file), 'db', 'sync']) == 0
    assert 'schema and standard names in place' in capsys.readouterr().out
    # Again: nothing to do, nothing fails.
    assert manage.main(['--config-file', str(conf_file), 'db', 'sync']) == 0
    conf = conf_lib.build_conf(overrides={
        ('placement_database', 'connection'): db_url,
        ('placement', 'sync_on_startup'): False,
        ('api', 'auth_strategy'): 'noauth2'})
    app = webtest.TestApp(deploy.deploy(conf))
    headers = {'OpenStack-API-Version': 'placement 1.6'}
    traits = app.get('/traits?name=startswith:HW_CPU_X86_AVX',
                     headers=headers).json['traits']
    assert 'HW_CPU_X86_AVX2' in traits
    classes = app.get('/resource_classes', headers=headers).json
    assert 'VGPU' in [rc['name'] for rc in classes['resource_classes']]
