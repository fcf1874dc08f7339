"""Names read back as written, on every database: any character, and
names that differ only in case are two names (on MySQL the placement
stub's migration 0002 makes its tables keep what PostgreSQL and SQLite
keep)."""

from placement_stub import conf as conf_lib
from placement_stub import deploy
from tests.fixtures import databases
from tests.functional.placement_stub import conftest

NAMES = ['gpu', 'GPU', 'GPU 配置 for 🚀 renders']


def _names(client, query=''):
    return sorted(rp['name'] for rp in client.call(
        'GET', '/resource_providers' + query, status=200
    ).json['resource_providers'])


def _check_names(client):
    uuids = {name: client.provider(name) for name in NAMES}
    assert _names(client) == sorted(NAMES)
    assert _names(client, '?name=gpu') == ['gpu']
    assert _names(client, '?name=GPU%20%E9%85%8D%E7%BD%AE%20for%20'
                          '%F0%9F%9A%80%20renders') == [NAMES[2]]
    got = client.call('GET', '/resource_providers/' + uuids[NAMES[2]],
                      status=200).json
    assert got['name'] == NAMES[2]


def test_names_keep_every_character_and_their_case(client):
    _check_names(client)


def test_mysql_in_its_default_character_set_keeps_them_too():
    """A database in the server's default character set (latin1 on
    MariaDB) behind a URL that names none, or devstack's 3-byte
    ``?charset=utf8``: the stub converts its tables and connects in
    utf8mb4 all the same."""
    for suffix in ('', '?charset=utf8'):
        with databases.mysql_database(charset=None) as url:
            conf = conf_lib.build_conf(overrides={
                ('placement_database', 'connection'): url + suffix,
                ('api', 'auth_strategy'): 'noauth2',
                ('placement', 'sync_on_startup'): True})
            _check_names(conftest.Client(deploy.deploy(conf)))
