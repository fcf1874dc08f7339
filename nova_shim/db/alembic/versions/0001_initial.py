"""The instances and the compute services.

Revision ID: 0001_initial
Revises:
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0001_initial'
down_revision = None
branch_labels = None
depends_on = None

MYSQL_TABLE = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                       'mariadb')


def upgrade():
    op.create_table(
        'instances',
        sa.Column('uuid', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255)),
        sa.Column('user_id', sa.String(255)),
        sa.Column('flavor', sa.Text, nullable=False),
        sa.Column('host', sa.String(255)),
        sa.Column('node', sa.String(255)),
        sa.Column('compute_node_uuid', sa.String(36)),
        sa.Column('vm_state', sa.String(32), nullable=False),
        sa.Column('task_state', sa.String(32)),
        sa.Column('power_state', sa.Integer, nullable=False),
        sa.Column('arq_uuids', sa.Text, nullable=False),
        sa.Column('allocation_claimed', sa.Boolean, nullable=False),
        sa.Column('fault', sa.Text),
        sa.Column('created_at', TIMESTAMP, nullable=False),
        sa.Column('updated_at', TIMESTAMP, nullable=False),
        sa.Column('retry', sa.Text),
        sa.Column('reservation_id', sa.String(255)),
        **MYSQL_TABLE)
    op.create_index('instances_project_id_idx', 'instances', ['project_id'])
    op.create_table(
        'services',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('disabled_reason', sa.String(255)),
        sa.Column('forced_down', sa.Boolean, nullable=False),
        sa.Column('updated_at', TIMESTAMP, nullable=False),
        **MYSQL_TABLE)
