"""devstack/plugin.sh, sourced by bash against a stand-in for devstack's
functions (``functions-stub.sh``): each stack.sh phase writes the config
and runs the commands a devstack run would."""

import configparser
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
PHASES = [('stack', 'install'), ('stack', 'post-config'),
          ('stack', 'extra'), ('unstack',), ('clean',)]


def calls(log):
    return [line.split() for line in log.read_text().splitlines()]


def run(tmp_path, phases, extra=()):
    log = tmp_path / 'calls.log'
    conf_dir = tmp_path / 'etc'
    bindir = tmp_path / 'bin'
    bindir.mkdir(exist_ok=True)
    for name in ('cyborg-lite-dbsync',):
        tool = bindir / name
        tool.write_text('#!/bin/sh\necho "%s $*" >> "$STUB_LOG"\n' % name)
        tool.chmod(0o755)
    script = ['set -e', 'source %s/functions-stub.sh' % HERE,
              'DEST=%s' % tmp_path, 'CYBORG_LITE_DIR=%s' % ROOT,
              'CYBORG_LITE_CONF_DIR=%s' % conf_dir,
              'CYBORG_LITE_BIN_DIR=%s' % bindir, *extra,
              'source %s/devstack/settings' % ROOT,
              'enable_service keystone']
    script += ['source %s/devstack/plugin.sh %s' % (ROOT, ' '.join(p))
               for p in phases]
    result = subprocess.run(['bash', '-c', '\n'.join(script)],
                            env=dict(os.environ, STUB_LOG=str(log)),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return calls(log) if log.exists() else [], conf_dir


def read_conf(conf_dir):
    parser = configparser.RawConfigParser()
    parser.read(conf_dir / 'cyborg-lite.conf')
    return parser


def test_install(tmp_path):
    log, _ = run(tmp_path, PHASES[:1])
    assert ['setup_develop', ROOT] in log
    assert ['pip_install', 'gunicorn'] in log


def test_settings_require_no_plugin_the_job_cannot_have(tmp_path):
    # Zuul's write-devstack-local-conf looks up every plugin that a
    # plugin_requires names among the job's plugins: naming one of
    # devstack's own services (placement) would fail the job.
    log, _ = run(tmp_path, [])
    assert ['define_plugin', 'cyborg-lite'] in log
    assert not [c for c in log if c[0] == 'plugin_requires']


def test_post_config_writes_the_config(tmp_path):
    _, conf_dir = run(tmp_path, PHASES[:2])
    conf = read_conf(conf_dir)
    assert conf.get('DEFAULT', 'transport_url') == (
        'rabbit://stackrabbit:rabbit-secret@192.0.2.10:5672/')
    assert conf.get('database', 'connection') == (
        'mysql+pymysql://root:db-secret@127.0.0.1/cyborg_lite?charset=utf8')
    assert conf.get('api', 'auth_strategy') == 'keystone'
    assert conf.get('api', 'port') == '6666'
    assert conf.get('keystone_authtoken', 'username') == 'cyborg'
    assert conf.get('keystone_authtoken', 'auth_url') == (
        'http://192.0.2.10/identity')
    assert conf.get('keystone_authtoken',
                    'service_token_roles_required') == 'True'
    # Its own service user, not Placement's or Nova's.
    for group in ('placement', 'nova'):
        assert conf.get(group, 'auth_type') == 'password'
        assert conf.get(group, 'username') == 'cyborg'
        assert conf.get(group, 'password') == 'service-secret'
        assert conf.get(group, 'project_name') == 'service'
    assert conf.get('agent', 'resource_provider_name') == os.uname()[1]


def test_post_config_output_is_a_valid_cyborg_lite_config(tmp_path):
    from cyborg_lite import conf as cl_conf
    _, conf_dir = run(tmp_path, PHASES[:2])
    conf = cl_conf.build_conf(
        default_config_files=[str(conf_dir / 'cyborg-lite.conf')])
    assert conf.api.auth_strategy == 'keystone'
    assert conf.agent.resource_provider_name == os.uname()[1]


def test_extra_syncs_registers_and_starts(tmp_path):
    log, conf_dir = run(tmp_path, PHASES[:3])
    conf_file = str(conf_dir / 'cyborg-lite.conf')
    assert ['recreate_database', 'cyborg_lite'] in log
    # The subcommand too: without it cyborg-lite-dbsync exits 2.
    dbsync = ['cyborg-lite-dbsync', '--config-file', conf_file, 'upgrade']
    assert dbsync in log
    assert log.index(['recreate_database', 'cyborg_lite']) < log.index(
        dbsync)
    assert ['create_service_user', 'cyborg', 'admin'] in log
    assert ['get_or_create_service', 'cyborg', 'accelerator',
            'Accelerator', 'Service'] in log
    assert ['get_or_create_endpoint', 'accelerator', 'RegionOne',
            'http://192.0.2.10:6666/v2'] in log
    started = [c[1] for c in log if c[0] == 'run_process']
    # The agent after a conductor answers through the API: its first
    # report goes to the conductors' topic at once.
    assert started == ['cyborg-lite-cond', 'cyborg-lite-api',
                       'cyborg-lite-agent']
    answered = ['curl', '-g', '-s', '-f', '-o', '/dev/null', '--max-time',
                '30', '-H', 'X-Auth-Token:', 'token-id',
                'http://192.0.2.10:6666/v2/device_profiles']
    heads = [c[:2] for c in log]
    assert heads.index(['run_process', 'cyborg-lite-api']) < log.index(
        answered) < heads.index(['run_process', 'cyborg-lite-agent'])
    api = next(c for c in log if c[:2] == ['run_process', 'cyborg-lite-api'])
    assert api[2:] == [str(tmp_path / 'bin' / 'cyborg-lite-api'),
                       '--config-file', conf_file]


def test_unstack_and_clean(tmp_path):
    log, conf_dir = run(tmp_path, PHASES)
    stopped = [c[1] for c in log if c[0] == 'stop_process']
    assert stopped == ['cyborg-lite-api', 'cyborg-lite-cond',
                       'cyborg-lite-agent']
    assert not conf_dir.exists()


def test_disabled_plugin_does_nothing(tmp_path):
    log, conf_dir = run(tmp_path, PHASES[:3], extra=[
        'function enable_service { :; }'])
    assert not [c for c in log if c[0] in ('run_process', 'iniset')]
    assert not conf_dir.exists()


def test_an_agent_only_node_leaves_the_database_to_the_controller(tmp_path):
    # A compute node: local.conf disables the API and the conductor.
    log, _ = run(tmp_path, PHASES[:3], extra=[
        'DISABLED_SERVICES=cyborg-lite-api,cyborg-lite-cond'])
    assert not [c for c in log if c[0] in ('recreate_database',
                                           'cyborg-lite-dbsync',
                                           'create_service_user')]
    assert [c[1] for c in log if c[0] == 'run_process'] == [
        'cyborg-lite-agent']
