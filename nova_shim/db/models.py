"""The tables of nova_shim's database (SQLAlchemy Core).

``instances`` (one row per server, the flavor it was built with as
JSON), ``services`` (one row per hypervisor hostname: whether the
scheduler may use it, and whether an operator forced it down),
``flavors`` and their ``flavor_extra_specs``. The alembic migrations in
``nova_shim/db/alembic`` make them; a test keeps the two in step.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

METADATA = sa.MetaData()
# On MySQL: text in utf8mb4 that compares as on PostgreSQL (case
# included), and timestamps to the microsecond.
MYSQL_TABLE = {'mysql_charset': 'utf8mb4', 'mysql_collate': 'utf8mb4_bin'}
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                       'mariadb')
INSTANCES = sa.Table(
    'instances', METADATA,
    sa.Column('uuid', sa.String(36), primary_key=True),
    sa.Column('name', sa.String(255), nullable=False),
    sa.Column('project_id', sa.String(255)),
    sa.Column('user_id', sa.String(255)),
    sa.Column('flavor', sa.Text, nullable=False),  # JSON, flavors.Flavor
    sa.Column('host', sa.String(255)),
    sa.Column('node', sa.String(255)),
    sa.Column('compute_node_uuid', sa.String(36)),
    sa.Column('vm_state', sa.String(32), nullable=False),
    sa.Column('task_state', sa.String(32)),
    sa.Column('power_state', sa.Integer, nullable=False, default=0),
    sa.Column('arq_uuids', sa.Text, nullable=False, default='[]'),
    sa.Column('allocation_claimed', sa.Boolean, nullable=False,
              default=False),
    sa.Column('fault', sa.Text),
    sa.Column('created_at', TIMESTAMP, nullable=False),
    sa.Column('updated_at', TIMESTAMP, nullable=False),
    # Nova's request spec "retry": {"num_attempts": n, "hosts": [[host,
    # node], ...]}, the compute nodes a build has tried (JSON).
    sa.Column('retry', sa.Text),
    # The reservation id of a multi-create, shared by its instances.
    sa.Column('reservation_id', sa.String(255)),
    # The image it was built from (imageRef), if any.
    sa.Column('image_ref', sa.String(255)),
    # Lists are by project.
    sa.Index('instances_project_id_idx', 'project_id'),
    **MYSQL_TABLE,
)
SERVICES = sa.Table(
    'services', METADATA,
    sa.Column('host', sa.String(255), primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('disabled', sa.Boolean, nullable=False, default=False),
    sa.Column('disabled_reason', sa.String(255)),
    sa.Column('forced_down', sa.Boolean, nullable=False, default=False),
    sa.Column('updated_at', TIMESTAMP, nullable=False),
    **MYSQL_TABLE,
)
FLAVORS = sa.Table(
    'flavors', METADATA,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    # The id the API shows (Nova's flavorid).
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
    **MYSQL_TABLE,
)
FLAVOR_EXTRA_SPECS = sa.Table(
    'flavor_extra_specs', METADATA,
    sa.Column('flavor_id', sa.Integer,
              sa.ForeignKey('flavors.id', ondelete='CASCADE'),
              primary_key=True),
    sa.Column('key', sa.String(255), primary_key=True),
    sa.Column('value', sa.String(255), nullable=False),
    **MYSQL_TABLE,
)
