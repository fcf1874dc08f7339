"""services: each conductor's host, RPC API version and last record

``[upgrade_levels] conductor = auto`` caps the RPC calls of the API
servers and agents at the oldest version that a running conductor
recorded here. Additive: older conductors neither read nor write it.

Revision ID: 0007_services
Revises: 0006_host_mirrored_at
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0007_services'
down_revision = '0006_host_mirrored_at'
branch_labels = None
depends_on = None

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.create_table(
        'services',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('created_at', DATETIME, nullable=True),
        sa.Column('updated_at', DATETIME, nullable=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(64), nullable=False),
        sa.Column('rpc_version', sa.String(16), nullable=False),
        sa.UniqueConstraint('host', 'binary',
                            name='services_host_binary_uc'),
        mysql_charset='utf8mb4', mysql_collate='utf8mb4_bin')


def downgrade():
    op.drop_table('services')
