"""SQLAlchemy models of the stub's database.

Indexes serve the hot paths: allocation candidates look inventories up by
resource class, usages by (provider, class), and trees by root provider.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy import orm


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class Base(orm.DeclarativeBase):
    pass


class _Timestamps:
    created_at = sa.Column(sa.DateTime, default=_now)
    updated_at = sa.Column(sa.DateTime, default=_now, onupdate=_now)


class ResourceProvider(_Timestamps, Base):
    __tablename__ = 'resource_providers'
    __table_args__ = (
        sa.Index('resource_providers_root_provider_id_idx',
                 'root_provider_id'),
        sa.Index('resource_providers_parent_provider_id_idx',
                 'parent_provider_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    name = sa.Column(sa.Unicode(200), nullable=False, unique=True)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    root_provider_id = sa.Column(sa.Integer,
                                 sa.ForeignKey('resource_providers.id'))
    parent_provider_id = sa.Column(sa.Integer,
                                   sa.ForeignKey('resource_providers.id'))


class ResourceClass(_Timestamps, Base):
    __tablename__ = 'resource_classes'
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.String(255), nullable=False, unique=True)


class Inventory(_Timestamps, Base):
    __tablename__ = 'inventories'
    __table_args__ = (
        sa.UniqueConstraint('resource_provider_id', 'resource_class_id',
                            name='uniq_inventories0rp0rc'),
        sa.Index('inventories_resource_class_id_idx', 'resource_class_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    resource_class_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_classes.id'), nullable=False)
    total = sa.Column(sa.Integer, nullable=False)
    reserved = sa.Column(sa.Integer, nullable=False)
    min_unit = sa.Column(sa.Integer, nullable=False)
    max_unit = sa.Column(sa.Integer, nullable=False)
    step_size = sa.Column(sa.Integer, nullable=False)
    allocation_ratio = sa.Column(sa.Float, nullable=False)


class Trait(_Timestamps, Base):
    __tablename__ = 'traits'
    id = sa.Column(sa.Integer, primary_key=True)
    name = sa.Column(sa.Unicode(255), nullable=False, unique=True)


class ProviderTrait(Base):
    __tablename__ = 'resource_provider_traits'
    __table_args__ = (
        sa.Index('resource_provider_traits_trait_id_idx', 'trait_id'),
    )
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), primary_key=True)
    trait_id = sa.Column(sa.Integer, sa.ForeignKey('traits.id'),
                         primary_key=True)


class Aggregate(Base):
    __tablename__ = 'placement_aggregates'
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)


class ProviderAggregate(Base):
    __tablename__ = 'resource_provider_aggregates'
    __table_args__ = (
        sa.Index('resource_provider_aggregates_aggregate_id_idx',
                 'aggregate_id'),
    )
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), primary_key=True)
    aggregate_id = sa.Column(sa.Integer,
                             sa.ForeignKey('placement_aggregates.id'),
                             primary_key=True)


class Consumer(_Timestamps, Base):
    __tablename__ = 'consumers'
    __table_args__ = (
        sa.Index('consumers_project_id_user_id_idx', 'project_id',
                 'user_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=False)
    consumer_type = sa.Column(sa.String(255))
    generation = sa.Column(sa.Integer, nullable=False, default=0)


class Allocation(_Timestamps, Base):
    __tablename__ = 'allocations'
    __table_args__ = (
        sa.Index('allocations_resource_provider_class_used_idx',
                 'resource_provider_id', 'resource_class_id', 'used'),
        sa.Index('allocations_resource_class_id_idx', 'resource_class_id'),
        sa.Index('allocations_consumer_id_idx', 'consumer_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    consumer_id = sa.Column(sa.String(36), nullable=False)
    resource_class_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_classes.id'), nullable=False)
    used = sa.Column(sa.Integer, nullable=False)
