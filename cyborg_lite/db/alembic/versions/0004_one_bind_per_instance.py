"""An instance's first bound ARQ claims it, uniquely

Two binds of different ARQs to one instance at once could both find no
other ARQ bound to the instance (neither sees the other's uncommitted
row on PostgreSQL or MySQL) and both bind. The first ARQ a bind gives
an instance now records it in ``instance_claim``, whose unique index
lets one of two such binds commit; the other runs again and finds the
instance bound.

Revision ID: 0004_one_bind_per_instance
Revises: 0003_indexes_and_mysql_text
Create Date: 2026-11-27
"""

from alembic import op
import sqlalchemy as sa


revision = '0004_one_bind_per_instance'
down_revision = '0003_indexes_and_mysql_text'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('extended_accelerator_requests',
                  sa.Column('instance_claim', sa.String(36), nullable=True))
    op.create_index('extarq_instance_claim_idx',
                    'extended_accelerator_requests', ['instance_claim'],
                    unique=True)


def downgrade():
    op.drop_index('extarq_instance_claim_idx',
                  table_name='extended_accelerator_requests')
    op.drop_column('extended_accelerator_requests', 'instance_claim')
