"""Instance actions and their events (``os-instance-actions``).

Revision ID: 0005_instance_actions
Revises: 0004_migrations
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0005_instance_actions'
down_revision = '0004_migrations'
branch_labels = None
depends_on = None

MYSQL_TABLE = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                       'mariadb')


def upgrade():
    op.create_table(
        'instance_actions',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('request_id', sa.String(255), nullable=False),
        sa.Column('action', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255)),
        sa.Column('project_id', sa.String(255)),
        sa.Column('start_time', TIMESTAMP, nullable=False),
        sa.Column('finish_time', TIMESTAMP),
        sa.Column('message', sa.String(255)),
        sa.Column('updated_at', TIMESTAMP, nullable=False),
        sa.Index('instance_actions_instance_uuid_request_id_idx',
                 'instance_uuid', 'request_id'),
        **MYSQL_TABLE)
    op.create_table(
        'instance_action_events',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('action_id', sa.Integer,
                  sa.ForeignKey('instance_actions.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('event', sa.String(255), nullable=False),
        sa.Column('start_time', TIMESTAMP, nullable=False),
        sa.Column('finish_time', TIMESTAMP),
        sa.Column('result', sa.String(255)),
        sa.Column('traceback', sa.Text),
        sa.Column('details', sa.Text),
        sa.Column('host', sa.String(255)),
        sa.Index('instance_action_events_action_id_idx', 'action_id'),
        **MYSQL_TABLE)
