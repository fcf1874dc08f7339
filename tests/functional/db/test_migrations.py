"""The alembic migrations build exactly the schema of the models, on
SQLite and on PostgreSQL, and cyborg-lite-dbsync drives them."""

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

from cyborg_lite import conf as cl_conf
from cyborg_lite.cmd import dbsync
from cyborg_lite.db import engine
from cyborg_lite.db import migration
from cyborg_lite.db import models
from tests.fixtures import databases


def _db(url):
    return engine.Database(cl_conf.build_conf(
        overrides={('database', 'connection'): url}))


def test_models_and_migrations_agree(db_url):
    db = _db(db_url)
    migration.upgrade(db)
    with db.engine.connect() as conn:
        context = alembic_migration.MigrationContext.configure(
            conn, opts={'compare_type': True,
                        'compare_server_default':
                            databases.compare_server_default})
        diff = autogenerate.compare_metadata(context, models.Base.metadata)
    db.dispose()
    assert diff == []


def test_version_and_head(db_url):
    db = _db(db_url)
    assert migration.version(db) is None
    migration.upgrade(db)
    assert migration.version(db) == migration.head()
    db.dispose()


def test_dbsync_commands(db_url, tmp_path, capsys):
    conf_file = tmp_path / 'cyborg-lite.conf'
    conf_file.write_text('[database]\nconnection = %s\n' % db_url)
    args = ['--config-file', str(conf_file)]
    assert dbsync.main(args + ['version']) == 0
    out, err = capsys.readouterr()
    assert out.startswith('No schema: the database is empty')
    # Which database, without its password.
    assert err.startswith('cyborg-lite-dbsync: database ')
    assert db_url.split('@')[-1] in err
    assert dbsync.main(args + ['stamp']) == 0
    assert migration.head() in capsys.readouterr().out
    db = _db(db_url)
    assert migration.version(db) == migration.head()
    # Stamping records the revision without creating tables.
    assert 'devices' not in sa.inspect(db.engine).get_table_names()
    db.dispose()


def test_dbsync_upgrade_creates_tables(db_url, tmp_path, capsys):
    conf_file = tmp_path / 'cyborg-lite.conf'
    conf_file.write_text('[database]\nconnection = %s\n' % db_url)
    assert dbsync.main(['--config-file', str(conf_file), 'upgrade']) == 0
    assert 'Database is at %s' % migration.head() in capsys.readouterr().out
    db = _db(db_url)
    tables = set(sa.inspect(db.engine).get_table_names())
    db.dispose()
    assert set(models.Base.metadata.tables) <= tables


def test_a_database_a_newer_release_upgraded_is_said_so(db_url, tmp_path,
                                                         capsys):
    """No traceback and no advice to upgrade that would fail: dbsync
    and the status check say the schema is newer than the code."""
    from cyborg_lite.cmd import status
    db = _db(db_url)
    migration.upgrade(db)
    with db.engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                             "'0099_from_a_newer_release'"))
    db.dispose()
    conf_file = tmp_path / 'cyborg-lite.conf'
    conf_file.write_text('[database]\nconnection = %s\n' % db_url)
    args = ['--config-file', str(conf_file)]
    for command in ('upgrade', 'stamp'):
        assert dbsync.main(args + [command]) == 1
        err = capsys.readouterr().err
        assert '0099_from_a_newer_release, a revision this cyborg-lite ' \
            'does not know' in err
        assert 'Traceback' not in err
    assert dbsync.main(args + ['version']) == 0
    assert 'newer than this cyborg-lite' in capsys.readouterr().out
    checks = status.Checks(cl_conf.build_conf(
        overrides={('database', 'connection'): db_url}))
    result = checks._check_database()
    assert result.code == status.Code.FAILURE
    assert 'a newer release upgraded it' in result.details


def test_dbsync_reads_a_config_dir(db_url, tmp_path, capsys):
    """As every service: ``--config-dir`` (a ``cyborg-lite.conf.d``)."""
    conf_dir = tmp_path / 'cyborg-lite.conf.d'
    conf_dir.mkdir()
    (conf_dir / '10-database.conf').write_text(
        '[database]\nconnection = %s\n' % db_url)
    assert dbsync.main(['--config-dir', str(conf_dir), 'upgrade']) == 0
    assert 'Database is at %s' % migration.head() in capsys.readouterr().out
