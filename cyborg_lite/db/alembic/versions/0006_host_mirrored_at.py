"""host_reports.mirrored_at: when Placement was last known in step

A conductor mirrors a host into Placement in full on its first report
after the conductor starts. With two conductors, a host that one of
them registered was mirrored again by the other at its next report:
the column says, to every conductor, when a conductor last made
Placement hold the host as stored. Additive: older conductors ignore it.

Revision ID: 0006_host_mirrored_at
Revises: 0005_program_requests
Create Date: 2026-12-02
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql


revision = '0006_host_mirrored_at'
down_revision = '0005_program_requests'
branch_labels = None
depends_on = None

DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def upgrade():
    op.add_column('host_reports',
                  sa.Column('mirrored_at', DATETIME, nullable=True))
