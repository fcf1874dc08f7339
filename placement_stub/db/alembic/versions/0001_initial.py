"""Initial schema of the placement stub.

Revision ID: 0001
Revises:
"""

from alembic import op
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime),
            sa.Column('updated_at', sa.DateTime)]


def _create_providers():
    op.create_table(
        'resource_providers',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('name', sa.Unicode(200), nullable=False, unique=True),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('root_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id')),
        sa.Column('parent_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id')),
        *_timestamps())
    op.create_index('resource_providers_root_provider_id_idx',
                    'resource_providers', ['root_provider_id'])
    op.create_index('resource_providers_parent_provider_id_idx',
                    'resource_providers', ['parent_provider_id'])


def _create_classes_and_inventories():
    op.create_table(
        'resource_classes',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        *_timestamps())
    op.create_table(
        'inventories',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('resource_class_id', sa.Integer,
                  sa.ForeignKey('resource_classes.id'), nullable=False),
        *[sa.Column(name, sa.Integer, nullable=False)
          for name in ('total', 'reserved', 'min_unit', 'max_unit',
                       'step_size')],
        sa.Column('allocation_ratio', sa.Float, nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('resource_provider_id', 'resource_class_id',
                            name='uniq_inventories0rp0rc'))
    op.create_index('inventories_resource_class_id_idx', 'inventories',
                    ['resource_class_id'])


def _create_traits_and_aggregates():
    op.create_table(
        'traits',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('name', sa.Unicode(255), nullable=False, unique=True),
        *_timestamps())
    op.create_table(
        'resource_provider_traits',
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), primary_key=True),
        sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'),
                  primary_key=True))
    op.create_index('resource_provider_traits_trait_id_idx',
                    'resource_provider_traits', ['trait_id'])
    op.create_table(
        'placement_aggregates',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True))
    op.create_table(
        'resource_provider_aggregates',
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), primary_key=True),
        sa.Column('aggregate_id', sa.Integer,
                  sa.ForeignKey('placement_aggregates.id'),
                  primary_key=True))
    op.create_index('resource_provider_aggregates_aggregate_id_idx',
                    'resource_provider_aggregates', ['aggregate_id'])


def _create_consumers_and_allocations():
    op.create_table(
        'consumers',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('consumer_type', sa.String(255)),
        sa.Column('generation', sa.Integer, nullable=False),
        *_timestamps())
    op.create_index('consumers_project_id_user_id_idx', 'consumers',
                    ['project_id', 'user_id'])
    op.create_table(
        'allocations',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('consumer_id', sa.String(36), nullable=False),
        sa.Column('resource_class_id', sa.Integer,
                  sa.ForeignKey('resource_classes.id'), nullable=False),
        sa.Column('used', sa.Integer, nullable=False),
        *_timestamps())
    op.create_index('allocations_resource_provider_class_used_idx',
                    'allocations', ['resource_provider_id',
                                    'resource_class_id', 'used'])
    op.create_index('allocations_resource_class_id_idx', 'allocations',
                    ['resource_class_id'])
    op.create_index('allocations_consumer_id_idx', 'allocations',
                    ['consumer_id'])


def upgrade():
    _create_providers()
    _create_classes_and_inventories()
    _create_traits_and_aggregates()
    _create_consumers_and_allocations()
