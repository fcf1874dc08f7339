"""Flavors and their extra specs, as Nova's flavor API keeps them.

Revision ID: 0002_flavors
Revises: 0001_initial
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0002_flavors'
down_revision = '0001_initial'
branch_labels = None
depends_on = None

MYSQL_TABLE = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                       'mariadb')


def upgrade():
    op.create_table(
        'flavors',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('flavorid', sa.String(255), nullable=False, unique=True),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('root_gb', sa.Integer, nullable=False),
        sa.Column('ephemeral_gb', sa.Integer, nullable=False),
        sa.Column('swap', sa.Integer, nullable=False),
        sa.Column('rxtx_factor', sa.Float, nullable=False),
        sa.Column('is_public', sa.Boolean, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('description', sa.Text),
        sa.Column('created_at', TIMESTAMP, nullable=False),
        **MYSQL_TABLE)
    op.create_table(
        'flavor_extra_specs',
        sa.Column('flavor_id', sa.Integer,
                  sa.ForeignKey('flavors.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('key', sa.String(255), primary_key=True),
        sa.Column('value', sa.String(255), nullable=False),
        **MYSQL_TABLE)
