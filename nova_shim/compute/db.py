"""The compute service's own database of instances.

Two tables, SQLAlchemy Core, context-free functions on a
:class:`Database`: ``instances``, and ``services`` (one row per
hypervisor hostname: whether the scheduler may use it, and whether an
operator forced it down). SQLite (a file under ``state_path`` by
default) and PostgreSQL both work. :meth:`Database.create_schema`
creates what is missing, including nullable columns added since a
database was made.
State changes that two requests may race on are compare-and-swaps:
:meth:`Database.update` takes the ``task_state`` (and optionally the
vm_states) the row must still have, and raises InstanceInvalidState when
it has moved on, so two actions never run on one instance at once.
"""

import dataclasses
import datetime
import json
import os
from typing import Any, Iterable

import sqlalchemy as sa
from oslo_config import cfg

from nova_shim import exception

METADATA = sa.MetaData()
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
    sa.Column('created_at', sa.DateTime, nullable=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
    # Nova's request spec "retry": {"num_attempts": n, "hosts": [[host,
    # node], ...]}, the compute nodes a build has tried (JSON).
    sa.Column('retry', sa.Text),
    # The reservation id of a multi-create, shared by its instances.
    sa.Column('reservation_id', sa.String(255)),
)
SERVICES = sa.Table(
    'services', METADATA,
    sa.Column('host', sa.String(255), primary_key=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('disabled', sa.Boolean, nullable=False, default=False),
    sa.Column('disabled_reason', sa.String(255)),
    sa.Column('forced_down', sa.Boolean, nullable=False, default=False),
    sa.Column('updated_at', sa.DateTime, nullable=False),
)
_JSON_COLUMNS = ('flavor', 'arq_uuids', 'retry')
_ANY = object()


@dataclasses.dataclass
class Instance:
    """One instance row; ``flavor`` is the flavor's dict (``vcpus``,
    ``memory_mb``, ``disk_gb``, ``extra_specs``)."""

    uuid: str
    name: str
    project_id: str | None
    user_id: str | None
    flavor: dict
    host: str | None
    node: str | None
    compute_node_uuid: str | None
    vm_state: str
    task_state: str | None
    power_state: int
    arq_uuids: list[str]
    allocation_claimed: bool
    fault: str | None
    created_at: datetime.datetime
    updated_at: datetime.datetime
    retry: dict | None = None
    reservation_id: str | None = None

    @property
    def device_profile(self) -> str | None:
        return self.flavor.get('extra_specs', {}).get('accel:device_profile')


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _encode(values: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v) if k in _JSON_COLUMNS else v
            for k, v in values.items()}


def _instance(row: sa.Row) -> Instance:
    values = dict(row._mapping)
    for key in _JSON_COLUMNS:
        if values[key] is not None:
            values[key] = json.loads(values[key])
    return Instance(**values)


@dataclasses.dataclass
class Service:
    """A compute node as a compute service (Nova's ``os-services``)."""

    host: str
    uuid: str
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    updated_at: datetime.datetime

    @property
    def is_up(self) -> bool:
        """Up unless forced down: the service runs in this process."""
        return not self.forced_down


def connection_url(conf: cfg.ConfigOpts) -> str:
    if conf.database.connection:
        return conf.database.connection
    os.makedirs(conf.state_path, exist_ok=True)
    return 'sqlite:///' + os.path.join(conf.state_path, 'nova_shim.sqlite')


class Database:
    """The instance table behind one SQLAlchemy engine."""

    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url)

    def create_schema(self) -> None:
        METADATA.create_all(self.engine)
        self._add_missing_columns()

    def _add_missing_columns(self) -> None:
        """Add the nullable columns a database made by an older release
        lacks (create_all adds tables, not columns)."""
        inspector = sa.inspect(self.engine)
        for table in METADATA.sorted_tables:
            present = {c['name'] for c in inspector.get_columns(table.name)}
            for column in table.columns:
                if column.name in present or not column.nullable:
                    continue
                kind = column.type.compile(dialect=self.engine.dialect)
                with self.engine.begin() as conn:
                    conn.execute(sa.text('ALTER TABLE %s ADD COLUMN %s %s' % (
                        table.name, column.name, kind)))

    def dispose(self) -> None:
        self.engine.dispose()

    def create(self, **values: Any) -> Instance:
        now = _now()
        values.setdefault('arq_uuids', [])
        values.setdefault('power_state', 0)
        values.setdefault('allocation_claimed', False)
        values.update(created_at=now, updated_at=now)
        with self.engine.begin() as conn:
            conn.execute(INSTANCES.insert().values(**_encode(values)))
        return self.get(values['uuid'])

    def get(self, uuid: str) -> Instance:
        with self.engine.connect() as conn:
            row = conn.execute(INSTANCES.select().where(
                INSTANCES.c.uuid == uuid)).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=uuid)
        return _instance(row)

    def list(self, project_id: str | None = None) -> list[Instance]:
        query = INSTANCES.select().order_by(INSTANCES.c.created_at)
        if project_id is not None:
            query = query.where(INSTANCES.c.project_id == project_id)
        with self.engine.connect() as conn:
            return [_instance(row) for row in conn.execute(query)]

    def update(self, uuid: str, *, expected_task_state: Any = _ANY,
               expected_vm_states: Iterable[str] | None = None,
               action: str = 'update', **values: Any) -> Instance:
        """Update one instance if it is still in the expected states."""
        query = INSTANCES.update().where(INSTANCES.c.uuid == uuid)
        if expected_task_state is not _ANY:
            query = query.where(INSTANCES.c.task_state.is_(None)
                                if expected_task_state is None else
                                INSTANCES.c.task_state == expected_task_state)
        if expected_vm_states is not None:
            query = query.where(
                INSTANCES.c.vm_state.in_(list(expected_vm_states)))
        values['updated_at'] = _now()
        with self.engine.begin() as conn:
            rowcount = conn.execute(query.values(**_encode(values))).rowcount
        if rowcount != 1:
            current = self.get(uuid)  # InstanceNotFound if it is gone
            attr, state = (('task_state', current.task_state)
                           if current.task_state else
                           ('vm_state', current.vm_state))
            raise exception.InstanceInvalidState(
                action=action, instance_id=uuid, attr=attr, state=state)
        return self.get(uuid)

    def delete(self, uuid: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(INSTANCES.delete().where(INSTANCES.c.uuid == uuid))

    # -- services ---------------------------------------------------

    def ensure_service(self, host: str, uuid: str) -> None:
        """Record a compute service for ``host`` unless it exists."""
        with self.engine.begin() as conn:
            found = conn.execute(SERVICES.select().where(
                SERVICES.c.host == host)).first()
            if found is None:
                conn.execute(SERVICES.insert().values(
                    host=host, uuid=uuid, disabled=False, forced_down=False,
                    updated_at=_now()))

    def list_services(self) -> 'list[Service]':
        with self.engine.connect() as conn:
            return [Service(**dict(row._mapping)) for row in conn.execute(
                SERVICES.select().order_by(SERVICES.c.host))]

    def update_service(self, host: str, **values: Any) -> Service:
        values['updated_at'] = _now()
        with self.engine.begin() as conn:
            conn.execute(SERVICES.update().where(
                SERVICES.c.host == host).values(**values))
        return next(s for s in self.list_services() if s.host == host)
