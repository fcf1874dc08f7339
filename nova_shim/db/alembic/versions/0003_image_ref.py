"""The image a server was built from (Nova's ``image_ref``).

Revision ID: 0003_image_ref
Revises: 0002_flavors
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa

revision = '0003_image_ref'
down_revision = '0002_flavors'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('instances', sa.Column('image_ref', sa.String(255)))
