"""Program requests: a programming the API gave up on never runs later

``PATCH /v2/deployables/{uuid}/program`` starts an FPGA's programming
on a conductor and waits for it by reading this table, so that a
programming may last as long as the agent lets its tool run. The
unique request id settles whether a request is run by a conductor or
given up by the API that sent it, whichever writes it first.

Revision ID: 0005_program_requests
Revises: 0004_one_bind_per_instance
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0005_program_requests'
down_revision = '0004_one_bind_per_instance'
branch_labels = None
depends_on = None

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'program_requests',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('created_at', DATETIME, nullable=True),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.Column('request_id', sa.String(36), nullable=False),
        sa.Column('state', sa.Enum(
            'programming', 'programmed', 'failed', 'abandoned',
            name='program_state', native_enum=False, create_constraint=True,
            length=32), nullable=False),
        sa.Column('deployable_uuid', sa.String(36), nullable=True),
        sa.Column('image_uuid', sa.String(36), nullable=True),
        sa.Column('beats', sa.Integer, nullable=False, server_default='0'),
        sa.Column('error', sa.Text, nullable=True),
        sa.UniqueConstraint('request_id'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')
    op.create_index('program_requests_updated_at_idx', 'program_requests',
                    ['updated_at'])


def downgrade():
    op.drop_index('program_requests_updated_at_idx',
                  table_name='program_requests')
    op.drop_table('program_requests')
