"""Foreign-key indexes; on MySQL, utf8mb4 binary text, MEDIUMTEXT
profiles and microsecond timestamps

PostgreSQL does not index a foreign key's column by itself: deleting a
control path or a deployable read every attach handle or deployable to
check the keys. MySQL indexes them already; the new ones are the same
there.

MySQL only: a table takes the server's default character set (latin1 on
a default MariaDB, which refuses most of Unicode) and a case-insensitive
collation (two profiles named ``gpu`` and ``GPU`` collide, and ``gpu``
finds ``GPU``); every table becomes utf8mb4 with binary collation, as
text compares on PostgreSQL and SQLite. A profile's groups may exceed
the 64 KiB of a TEXT (MEDIUMTEXT), and timestamps keep their
microseconds (DATETIME(6)).

Revision ID: 0003_indexes_and_mysql_text
Revises: 0002_free_handles_in_id_order
Create Date: 2026-11-27
"""

from alembic import op
from sqlalchemy.dialects import mysql


revision = '0003_indexes_and_mysql_text'
down_revision = '0002_free_handles_in_id_order'
branch_labels = None
depends_on = None

INDEXES = [('attach_handles_cpid_id_idx', 'attach_handles', 'cpid_id'),
           ('deployables_parent_id_idx', 'deployables', 'parent_id'),
           ('deployables_root_id_idx', 'deployables', 'root_id')]
TABLES = ['devices', 'controlpath_ids', 'deployables', 'attributes',
          'attach_handles', 'device_profiles',
          'extended_accelerator_requests', 'host_reports']


def upgrade():
    for name, table, column in INDEXES:
        op.create_index(name, table, [column])
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    for table in TABLES:
        op.execute('ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4 '
                   'COLLATE utf8mb4_bin' % table)
        for column in ('created_at', 'updated_at'):
            op.alter_column(table, column, type_=mysql.DATETIME(fsp=6),
                            existing_nullable=True)
    op.alter_column('device_profiles', 'profile_json',
                    type_=mysql.MEDIUMTEXT(), existing_nullable=False)


def downgrade():
    # The MySQL types and character set stay: they hold what the older
    # schema held.
    for name, table, _column in INDEXES:
        op.drop_index(name, table_name=table)
