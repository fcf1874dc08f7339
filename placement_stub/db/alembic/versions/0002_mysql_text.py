"""On MySQL, utf8mb4 text compared byte for byte

A MySQL table takes the server's default character set (latin1 on a
default MariaDB: a provider named in Chinese or with an emoji could not
be stored) and a case-insensitive collation (providers named ``gpu``
and ``GPU`` collided, and ``?name=gpu`` found ``GPU``). Every table
becomes utf8mb4 with binary collation, as text compares on PostgreSQL
and SQLite. Nothing changes on other databases.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

TABLES = ['resource_providers', 'resource_classes', 'inventories', 'traits',
          'resource_provider_traits', 'placement_aggregates',
          'resource_provider_aggregates', 'consumers', 'allocations']


def upgrade():
    if op.get_bind().dialect.name not in ('mysql', 'mariadb'):
        return
    for table in TABLES:
        op.execute('ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4 '
                   'COLLATE utf8mb4_bin' % table)


def downgrade():
    # The character set stays: it holds what the older one held.
    pass
