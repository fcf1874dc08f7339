"""The tables of nova_shim's database (SQLAlchemy Core).

``instances`` (one row per server, the flavor it was built with as
JSON), ``services`` (one row per hypervisor hostname: whether the
scheduler may use it, and whether an operator forced it down),
``flavors`` and their ``flavor_extra_specs``, ``instance_actions`` and
their ``instance_action_events``. The alembic migrations in
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
MIGRATIONS = sa.Table(
    'migrations', METADATA,
    # The id Nova's API shows; ``uuid`` is the Placement consumer that
    # holds the source node's allocation while the move is unconfirmed.
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False),
    # ``migration`` (a cold migration) or ``resize``, as Nova names them.
    sa.Column('migration_type', sa.String(16), nullable=False),
    # Nova's: pre-migrating, migrating, finished (VERIFY_RESIZE),
    # confirming, confirmed, reverting, reverted, error.
    sa.Column('status', sa.String(32), nullable=False),
    sa.Column('source_compute', sa.String(255)),
    sa.Column('source_node', sa.String(255)),
    sa.Column('dest_compute', sa.String(255)),
    sa.Column('dest_node', sa.String(255)),
    # The flavors (the instance's JSON snapshot of each), and the ARQs
    # the instance had on the source with the device provider of each
    # (JSON ``{arq uuid: rp uuid}``): a revert binds them there again.
    sa.Column('old_flavor', sa.Text, nullable=False),
    sa.Column('new_flavor', sa.Text, nullable=False),
    sa.Column('source_arqs', sa.Text, nullable=False),
    # The vm_state the move started from (active or stopped).
    sa.Column('old_vm_state', sa.String(32), nullable=False),
    sa.Column('project_id', sa.String(255)),
    sa.Column('user_id', sa.String(255)),
    sa.Column('created_at', TIMESTAMP, nullable=False),
    sa.Column('updated_at', TIMESTAMP, nullable=False),
    sa.Index('migrations_instance_uuid_idx', 'instance_uuid'),
    **MYSQL_TABLE,
)
# What was asked of each instance (Nova's instance actions): one row per
# request and instance, found by its request id; and the steps of each
# (its events), with their outcome. They outlive the instance, as in
# Nova, which shows a deleted server's actions.
INSTANCE_ACTIONS = sa.Table(
    'instance_actions', METADATA,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False),
    sa.Column('request_id', sa.String(255), nullable=False),
    # Nova's action names: create, delete, stop, start, live-migration...
    sa.Column('action', sa.String(255), nullable=False),
    sa.Column('user_id', sa.String(255)),
    sa.Column('project_id', sa.String(255)),
    sa.Column('start_time', TIMESTAMP, nullable=False),
    sa.Column('finish_time', TIMESTAMP),
    # 'Error' once one of its events failed, as Nova sets it.
    sa.Column('message', sa.String(255)),
    sa.Column('updated_at', TIMESTAMP, nullable=False),
    sa.Index('instance_actions_instance_uuid_request_id_idx',
             'instance_uuid', 'request_id'),
    **MYSQL_TABLE,
)
INSTANCE_ACTION_EVENTS = sa.Table(
    'instance_action_events', METADATA,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('action_id', sa.Integer,
              sa.ForeignKey('instance_actions.id', ondelete='CASCADE'),
              nullable=False),
    sa.Column('event', sa.String(255), nullable=False),
    sa.Column('start_time', TIMESTAMP, nullable=False),
    sa.Column('finish_time', TIMESTAMP),
    # 'Success' or 'Error'; None while the event runs.
    sa.Column('result', sa.String(255)),
    sa.Column('traceback', sa.Text),
    # The failure's message.
    sa.Column('details', sa.Text),
    sa.Column('host', sa.String(255)),
    sa.Index('instance_action_events_action_id_idx', 'action_id'),
    **MYSQL_TABLE,
)
