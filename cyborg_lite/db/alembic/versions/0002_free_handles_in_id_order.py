"""Free attach handles of a deployable in id order from the index

A bind takes the first free handles of a deployable in id order. With
``(deployable_id, in_use)`` the database read every free handle of the
deployable and sorted them; with ``id`` in the index it reads the first
few in order, whatever the number of handles.

Revision ID: 0002_free_handles_in_id_order
Revises: 0001_initial
Create Date: 2026-11-22
"""

from alembic import op


revision = '0002_free_handles_in_id_order'
down_revision = '0001_initial'
branch_labels = None
depends_on = None


def upgrade():
    # The new index first: MySQL refuses to drop the only index that
    # serves the foreign key on deployable_id.
    op.create_index('attach_handles_deployable_id_in_use_id_idx',
                    'attach_handles', ['deployable_id', 'in_use', 'id'])
    op.drop_index('attach_handles_deployable_id_in_use_idx',
                  table_name='attach_handles')


def downgrade():
    op.create_index('attach_handles_deployable_id_in_use_idx',
                    'attach_handles', ['deployable_id', 'in_use'])
    op.drop_index('attach_handles_deployable_id_in_use_id_idx',
                  table_name='attach_handles')
