"""SQLAlchemy models of the cyborg-lite database.

Column names and meanings follow upstream Cyborg (see the API contract,
section 5). Enum columns are stored as strings with CHECK constraints
(``native_enum=False``) so that the schema is the same on SQLite,
PostgreSQL and MySQL. Every column that the API filters on is indexed.
"""

from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm

from cyborg_lite import model as cl_model
from cyborg_lite import states


# On MySQL a DATETIME drops the microseconds and a TEXT holds 64 KiB:
# these keep what PostgreSQL and SQLite keep (migration 0003).
DATETIME = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')
MEDIUM_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


class _Timestamps:
    """oslo.db's ``TimestampMixin``, with microseconds on MySQL too."""

    created_at = sa.Column(DATETIME, default=lambda: timeutils.utcnow())
    updated_at = sa.Column(DATETIME, onupdate=lambda: timeutils.utcnow())


class Base(orm.DeclarativeBase, _Timestamps):
    """Base of every table: integer ``id`` plus ``created_at`` and
    ``updated_at``. On MySQL the tables are utf8mb4 with binary
    collation (migration 0003): text compares as on PostgreSQL, case
    included, and takes any character."""


def _enum(name, values):
    return sa.Enum(*values, name=name, native_enum=False,
                   create_constraint=True, length=32)


def _values(enum_cls):
    return [member.value for member in enum_cls]


class Device(Base):
    __tablename__ = 'devices'
    __table_args__ = (
        sa.Index('devices_hostname_idx', 'hostname'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    type = sa.Column(_enum('device_type', _values(cl_model.DeviceType)),
                     nullable=False)
    vendor = sa.Column(sa.String(255), nullable=False)
    model = sa.Column(sa.String(255), nullable=False)
    std_board_info = sa.Column(sa.Text, nullable=True)
    vendor_board_info = sa.Column(sa.Text, nullable=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    status = sa.Column(_enum('device_status', _values(cl_model.DeviceStatus)),
                       nullable=False, default='enabled',
                       server_default='enabled')
    # Set when the device vanished from its host while one of its handles
    # was in use; it is removed once the handles are released.
    vanished = sa.Column(sa.Boolean, nullable=False, default=False,
                         server_default=sa.false())


class ControlpathID(Base):
    __tablename__ = 'controlpath_ids'
    __table_args__ = (
        sa.Index('controlpath_ids_device_id_idx', 'device_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    device_id = sa.Column(sa.Integer,
                          sa.ForeignKey('devices.id', ondelete='RESTRICT'),
                          nullable=False)
    cpid_type = sa.Column(_enum('cpid_type',
                                _values(cl_model.ControlPathType)),
                          nullable=False)
    cpid_info = sa.Column(sa.String(255), nullable=False)


class Deployable(Base):
    __tablename__ = 'deployables'
    __table_args__ = (
        sa.Index('deployables_device_id_idx', 'device_id'),
        sa.Index('deployables_rp_uuid_idx', 'rp_uuid'),
        # The foreign keys checked when a deployable is deleted.
        sa.Index('deployables_parent_id_idx', 'parent_id'),
        sa.Index('deployables_root_id_idx', 'root_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    parent_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                          nullable=True)
    root_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                        nullable=True)
    name = sa.Column(sa.String(255), nullable=False)
    num_accelerators = sa.Column(sa.Integer, nullable=False)
    device_id = sa.Column(sa.Integer,
                          sa.ForeignKey('devices.id', ondelete='RESTRICT'),
                          nullable=False)
    rp_uuid = sa.Column(sa.String(36), nullable=True)
    driver_name = sa.Column(sa.String(100), nullable=True)
    bitstream_id = sa.Column(sa.String(36), nullable=True)


class Attribute(Base):
    __tablename__ = 'attributes'
    __table_args__ = (
        sa.Index('attributes_deployable_id_idx', 'deployable_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    deployable_id = sa.Column(
        sa.Integer, sa.ForeignKey('deployables.id', ondelete='RESTRICT'),
        nullable=False)
    key = sa.Column(sa.Text, nullable=False)
    value = sa.Column(sa.Text, nullable=False)


class AttachHandle(Base):
    __tablename__ = 'attach_handles'
    __table_args__ = (
        # A bind reads a deployable's first free handles in id order.
        sa.Index('attach_handles_deployable_id_in_use_id_idx',
                 'deployable_id', 'in_use', 'id'),
        # The foreign key checked when a control path is deleted.
        sa.Index('attach_handles_cpid_id_idx', 'cpid_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    deployable_id = sa.Column(
        sa.Integer, sa.ForeignKey('deployables.id', ondelete='RESTRICT'),
        nullable=False)
    cpid_id = sa.Column(sa.Integer,
                        sa.ForeignKey('controlpath_ids.id',
                                      ondelete='RESTRICT'),
                        nullable=False)
    in_use = sa.Column(sa.Boolean, nullable=False, default=False,
                       server_default=sa.false())
    attach_type = sa.Column(_enum('attach_type', _values(cl_model.AttachType)),
                            nullable=False)
    attach_info = sa.Column(sa.String(255), nullable=False)


class DeviceProfile(Base):
    __tablename__ = 'device_profiles'
    __table_args__ = (
        sa.UniqueConstraint('uuid', 'name',
                            name='uniq_device_profiles0uuid0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    name = sa.Column(sa.String(255), nullable=False, unique=True)
    profile_json = sa.Column(MEDIUM_TEXT, nullable=False)
    description = sa.Column(sa.Text, nullable=True)


class ExtArq(Base):
    __tablename__ = 'extended_accelerator_requests'
    __table_args__ = (
        sa.Index('extarq_project_id_idx', 'project_id'),
        sa.Index('extarq_device_profile_id_idx', 'device_profile_id'),
        sa.Index('extarq_device_rp_uuid_idx', 'device_rp_uuid'),
        sa.Index('extarq_instance_uuid_idx', 'instance_uuid'),
        sa.Index('extarq_attach_handle_id_idx', 'attach_handle_id'),
        sa.Index('extarq_deployable_id_idx', 'deployable_id'),
        sa.Index('extarq_state_updated_at_idx', 'state', 'updated_at'),
        sa.Index('extarq_instance_claim_idx', 'instance_claim',
                 unique=True),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False, unique=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    state = sa.Column(_enum('arq_state', states.ALL_STATES),
                      nullable=False, default=states.INITIAL)
    substate = sa.Column(_enum('arq_substate', [states.INITIAL]),
                         nullable=False, default=states.INITIAL,
                         server_default=states.INITIAL)
    device_profile_id = sa.Column(
        sa.Integer, sa.ForeignKey('device_profiles.id', ondelete='RESTRICT'),
        nullable=False)
    device_profile_group_id = sa.Column(sa.Integer, nullable=False,
                                        default=0, server_default='0')
    hostname = sa.Column(sa.String(255), nullable=True)
    device_rp_uuid = sa.Column(sa.String(36), nullable=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    # The instance, on the first ARQ that a bind gave it (NULL on the
    # others): unique, so that two binds of different ARQs to one
    # instance at once cannot both be its first, whatever the database's
    # isolation (see cyborg_lite.db.binding).
    instance_claim = sa.Column(sa.String(36), nullable=True)
    attach_handle_id = sa.Column(
        sa.Integer, sa.ForeignKey('attach_handles.id', ondelete='RESTRICT'),
        nullable=True)
    deployable_id = sa.Column(
        sa.Integer, sa.ForeignKey('deployables.id', ondelete='RESTRICT'),
        nullable=True)


class HostReport(Base):
    """The digest of each host's last applied report, so that an
    unchanged report costs one indexed read and no write."""

    __tablename__ = 'host_reports'

    id = sa.Column(sa.Integer, primary_key=True)
    hostname = sa.Column(sa.String(255), nullable=False, unique=True)
    digest = sa.Column(sa.String(64), nullable=False)
    # When a conductor last made Placement hold the host as stored
    # (NULL: not known to be in step), so that the other conductors
    # need not mirror it again.
    mirrored_at = sa.Column(DATETIME, nullable=True)


class ProgramRequest(Base):
    """One ``PATCH /v2/deployables/{uuid}/program``: who may still run
    it, and how it ended (see ``cyborg_lite.db.programs``). The
    request id is the API's; its unique index settles whether a request
    is run or given up, whichever comes first."""

    __tablename__ = 'program_requests'
    __table_args__ = (
        sa.Index('program_requests_updated_at_idx', 'updated_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    request_id = sa.Column(sa.String(36), nullable=False, unique=True)
    state = sa.Column(_enum('program_state', states.PROGRAM_STATES),
                      nullable=False)
    deployable_uuid = sa.Column(sa.String(36), nullable=True)
    image_uuid = sa.Column(sa.String(36), nullable=True)
    # Raised by the programming conductor while it works: a caller that
    # sees it still for a while takes that conductor for lost.
    beats = sa.Column(sa.Integer, nullable=False, default=0,
                      server_default='0')
    error = sa.Column(sa.Text, nullable=True)


class Service(Base):
    """A running service's record: its host, binary and RPC API
    version, renewed every ``[conductor] report_interval`` (see
    ``cyborg_lite.db.services``)."""

    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('host', 'binary',
                            name='services_host_binary_uc'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(64), nullable=False)
    rpc_version = sa.Column(sa.String(16), nullable=False)
