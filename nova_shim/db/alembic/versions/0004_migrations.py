"""Migrations: the cold migrations and resizes of instances.

Revision ID: 0004_migrations
Revises: 0003_image_ref
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0004_migrations'
down_revision = '0003_image_ref'
branch_labels = None
depends_on = None

MYSQL_TABLE = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                       'mariadb')


def upgrade():
    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('migration_type', sa.String(16), nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('source_compute', sa.String(255)),
        sa.Column('source_node', sa.String(255)),
        sa.Column('dest_compute', sa.String(255)),
        sa.Column('dest_node', sa.String(255)),
        sa.Column('old_flavor', sa.Text, nullable=False),
        sa.Column('new_flavor', sa.Text, nullable=False),
        sa.Column('source_arqs', sa.Text, nullable=False),
        sa.Column('old_vm_state', sa.String(32), nullable=False),
        sa.Column('project_id', sa.String(255)),
        sa.Column('user_id', sa.String(255)),
        sa.Column('created_at', TIMESTAMP, nullable=False),
        sa.Column('updated_at', TIMESTAMP, nullable=False),
        sa.Index('migrations_instance_uuid_idx', 'instance_uuid'),
        **MYSQL_TABLE)
