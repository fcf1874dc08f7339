"""The compute service's database: context-free functions on a
``Database``.

SQLite (a file under ``state_path`` by default), PostgreSQL and MySQL
all work. The schema comes from the migrations (``nova-shim-manage db
sync``, ``nova_shim.db.migration``). State changes that two requests
may race on are compare-and-swaps: ``Database.update`` takes the
``task_state`` (and optionally the vm_states) the row must still have,
and raises InstanceInvalidState when it has moved on, so two actions
never run on one instance at once.
"""

import datetime
import json
import os
from typing import Any, Iterable

from oslo_config import cfg
import sqlalchemy as sa

from lite_common import mysql_text
from nova_shim.db.models import FLAVOR_EXTRA_SPECS
from nova_shim.db.models import FLAVORS
from nova_shim.db.models import INSTANCE_ACTION_EVENTS
from nova_shim.db.models import INSTANCE_ACTIONS
from nova_shim.db.models import INSTANCES
from nova_shim.db.models import MIGRATIONS
from nova_shim.db.models import SERVICES
from nova_shim import exception
from nova_shim.objects import Flavor
from nova_shim.objects import Instance
from nova_shim.objects import Migration
from nova_shim.objects import Service

_JSON_COLUMNS = ('flavor', 'arq_uuids', 'retry')
_ANY = object()


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _encode(values: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v) if k in _JSON_COLUMNS else v
            for k, v in values.items()}


_MIGRATION_JSON = ('old_flavor', 'new_flavor', 'source_arqs')


def _migration(row: sa.Row) -> Migration:
    values = dict(row._mapping)
    for key in _MIGRATION_JSON:
        values[key] = json.loads(values[key])
    return Migration(**values)


def _instance(row: sa.Row) -> Instance:
    values = dict(row._mapping)
    for key in _JSON_COLUMNS:
        if values[key] is not None:
            values[key] = json.loads(values[key])
    return Instance(**values)


def connection_url(conf: cfg.ConfigOpts) -> str:
    if conf.database.connection:
        return conf.database.connection
    os.makedirs(conf.state_path, exist_ok=True)
    return 'sqlite:///' + os.path.join(conf.state_path, 'nova_shim.sqlite')


class Database:
    """The instances and services behind one SQLAlchemy engine."""

    def __init__(self, url: str) -> None:
        # MySQL speaks utf8mb4 whatever the URL's charset.
        self.engine = sa.create_engine(mysql_text.with_utf8mb4(url))

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

    # -- migrations -------------------------------------------------

    def create_migration(self, **values: Any) -> Migration:
        """Record a migration; ``values`` as ``Migration``'s fields but
        ``id`` and the timestamps."""
        values['created_at'] = values['updated_at'] = _now()
        encoded = {k: json.dumps(v) if k in _MIGRATION_JSON else v
                   for k, v in values.items()}
        with self.engine.begin() as conn:
            conn.execute(MIGRATIONS.insert().values(**encoded))
        return self.get_migration(values['uuid'])

    def get_migration(self, uuid: str) -> Migration:
        with self.engine.connect() as conn:
            row = conn.execute(MIGRATIONS.select().where(
                MIGRATIONS.c.uuid == uuid)).first()
        if row is None:
            raise exception.MigrationNotFound(migration_id=uuid)
        return _migration(row)

    def update_migration(self, uuid: str, **values: Any) -> Migration:
        values['updated_at'] = _now()
        encoded = {k: json.dumps(v) if k in _MIGRATION_JSON else v
                   for k, v in values.items()}
        with self.engine.begin() as conn:
            conn.execute(MIGRATIONS.update().where(
                MIGRATIONS.c.uuid == uuid).values(**encoded))
        return self.get_migration(uuid)

    def list_migrations(self, instance_uuid: str | None = None,
                        statuses: Iterable[str] | None = None,
                        **equal: Any) -> 'list[Migration]':
        """Migrations, newest first; of one instance, in some statuses,
        with columns ``equal`` to the values given (None: any)."""
        query = MIGRATIONS.select().order_by(MIGRATIONS.c.created_at.desc(),
                                             MIGRATIONS.c.id.desc())
        if instance_uuid is not None:
            query = query.where(MIGRATIONS.c.instance_uuid == instance_uuid)
        if statuses is not None:
            query = query.where(MIGRATIONS.c.status.in_(list(statuses)))
        for column, value in equal.items():
            if value is not None:
                query = query.where(MIGRATIONS.c[column] == value)
        with self.engine.connect() as conn:
            return [_migration(row) for row in conn.execute(query)]

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


    # -- flavors ----------------------------------------------------

    def count_flavors(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(sa.func.count()).select_from(FLAVORS)).scalar()

    def create_flavor(self, flavor: Flavor) -> Flavor:
        """Store ``flavor`` with its extra specs; FlavorExists when its
        name or id is taken."""
        values = dict(flavorid=flavor.flavorid, name=flavor.name,
                      vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
                      root_gb=flavor.disk_gb,
                      ephemeral_gb=flavor.ephemeral_gb, swap=flavor.swap,
                      rxtx_factor=flavor.rxtx_factor,
                      is_public=flavor.is_public, disabled=flavor.disabled,
                      description=flavor.description, created_at=_now())
        try:
            with self.engine.begin() as conn:
                for column, value, kind in (
                        (FLAVORS.c.name, flavor.name, 'name'),
                        (FLAVORS.c.flavorid, flavor.flavorid, 'ID')):
                    if conn.execute(FLAVORS.select().where(
                            column == value)).first() is not None:
                        raise exception.FlavorExists(kind=kind, value=value)
                key = conn.execute(FLAVORS.insert().values(
                    **values)).inserted_primary_key[0]
                if flavor.extra_specs:
                    conn.execute(FLAVOR_EXTRA_SPECS.insert(), [
                        {'flavor_id': key, 'key': k, 'value': v}
                        for k, v in flavor.extra_specs.items()])
        except sa.exc.IntegrityError as exc:
            # Another request took the name or the id meanwhile.
            raise exception.FlavorExists(
                kind='name or ID', value=flavor.name) from exc
        return self.get_flavor(flavor.flavorid)

    def get_flavor(self, ref: str) -> Flavor:
        """The flavor whose id is ``ref``, else the one so named;
        FlavorNotFound."""
        with self.engine.connect() as conn:
            row = _flavor_row(conn, ref)
            return _flavor(row, _specs(conn, [row.id])[row.id])

    def list_flavors(self, is_public: bool | None = True) -> 'list[Flavor]':
        """Flavors in id order: the public ones, the private ones
        (``False``) or all (``None``)."""
        query = FLAVORS.select().order_by(FLAVORS.c.flavorid)
        if is_public is not None:
            query = query.where(FLAVORS.c.is_public == is_public)
        with self.engine.connect() as conn:
            rows = list(conn.execute(query))
            specs = _specs(conn, [row.id for row in rows])
        return [_flavor(row, specs[row.id]) for row in rows]

    def update_flavor(self, ref: str, **values: Any) -> Flavor:
        with self.engine.begin() as conn:
            row = _flavor_row(conn, ref)
            conn.execute(FLAVORS.update().where(
                FLAVORS.c.id == row.id).values(**values))
        return self.get_flavor(row.flavorid)

    def delete_flavor(self, ref: str) -> None:
        with self.engine.begin() as conn:
            row = _flavor_row(conn, ref)
            conn.execute(FLAVOR_EXTRA_SPECS.delete().where(
                FLAVOR_EXTRA_SPECS.c.flavor_id == row.id))
            conn.execute(FLAVORS.delete().where(FLAVORS.c.id == row.id))

    def set_extra_specs(self, ref: str, specs: dict[str, str]) -> Flavor:
        """Add or replace ``specs`` of the flavor."""
        with self.engine.begin() as conn:
            row = _flavor_row(conn, ref)
            current = _specs(conn, [row.id])[row.id]
            for key, value in specs.items():
                where = sa.and_(FLAVOR_EXTRA_SPECS.c.flavor_id == row.id,
                                FLAVOR_EXTRA_SPECS.c.key == key)
                if key in current:
                    conn.execute(FLAVOR_EXTRA_SPECS.update().where(
                        where).values(value=value))
                else:
                    conn.execute(FLAVOR_EXTRA_SPECS.insert().values(
                        flavor_id=row.id, key=key, value=value))
        return self.get_flavor(row.flavorid)

    def delete_extra_spec(self, ref: str, key: str) -> None:
        """FlavorExtraSpecsNotFound when the flavor has no such key."""
        with self.engine.begin() as conn:
            row = _flavor_row(conn, ref)
            gone = conn.execute(FLAVOR_EXTRA_SPECS.delete().where(sa.and_(
                FLAVOR_EXTRA_SPECS.c.flavor_id == row.id,
                FLAVOR_EXTRA_SPECS.c.key == key))).rowcount
        if not gone:
            raise exception.FlavorExtraSpecsNotFound(
                flavor_id=row.flavorid, extra_specs_key=key)

    # -- instance actions ---------------------------------------------
    #
    # Actions and events are dicts of their columns (an action found by
    # ``get_action`` with its ``events`` too). They are kept when their
    # instance is deleted, as Nova keeps them.

    def start_action(self, instance_uuid: str, request_id: str, action: str,
                     user_id: str | None,
                     project_id: str | None) -> dict[str, Any]:
        """Record that ``request_id`` asked ``action`` of the instance."""
        now = _now()
        with self.engine.begin() as conn:
            key = conn.execute(INSTANCE_ACTIONS.insert().values(
                instance_uuid=instance_uuid, request_id=request_id,
                action=action, user_id=user_id, project_id=project_id,
                start_time=now, updated_at=now)).inserted_primary_key[0]
            row = conn.execute(INSTANCE_ACTIONS.select().where(
                INSTANCE_ACTIONS.c.id == key)).one()
        return dict(row._mapping)

    def forget_action(self, instance_uuid: str, request_id: str) -> None:
        """Delete the request's action on the instance, with its events
        (an action the compute refused)."""
        with self.engine.begin() as conn:
            ids = [row.id for row in conn.execute(
                sa.select(INSTANCE_ACTIONS.c.id).where(
                    INSTANCE_ACTIONS.c.instance_uuid == instance_uuid,
                    INSTANCE_ACTIONS.c.request_id == request_id))]
            if ids:
                conn.execute(INSTANCE_ACTION_EVENTS.delete().where(
                    INSTANCE_ACTION_EVENTS.c.action_id.in_(ids)))
                conn.execute(INSTANCE_ACTIONS.delete().where(
                    INSTANCE_ACTIONS.c.id.in_(ids)))

    def start_action_event(self, instance_uuid: str, request_id: str,
                           event: str, host: str | None = None,
                           start_time: datetime.datetime | None = None
                           ) -> int | None:
        """Record that ``event`` of the request's action on the instance
        began (now, or at ``start_time``): the event's id, or None when
        the instance has no action of that request."""
        start_time = start_time or _now()
        with self.engine.begin() as conn:
            action = _action_row(conn, instance_uuid, request_id)
            if action is None:
                return None
            key = conn.execute(INSTANCE_ACTION_EVENTS.insert().values(
                action_id=action.id, event=event, start_time=start_time,
                host=host)).inserted_primary_key[0]
            conn.execute(INSTANCE_ACTIONS.update().where(
                INSTANCE_ACTIONS.c.id == action.id).values(
                    updated_at=start_time))
        return key

    def finish_action_event(self, event_id: int, result: str,
                            traceback: str | None = None,
                            details: str | None = None) -> None:
        """Record the event's end and ``result`` ('Success' or 'Error');
        its action's ``updated_at`` with it, and on an error its
        ``message``: 'Error', as Nova does."""
        now = _now()
        with self.engine.begin() as conn:
            row = conn.execute(INSTANCE_ACTION_EVENTS.select().where(
                INSTANCE_ACTION_EVENTS.c.id == event_id)).first()
            if row is None:
                return  # its action was forgotten meanwhile
            conn.execute(INSTANCE_ACTION_EVENTS.update().where(
                INSTANCE_ACTION_EVENTS.c.id == event_id).values(
                    finish_time=now, result=result, traceback=traceback,
                    details=details))
            changes: dict[str, Any] = {'updated_at': now}
            if result.lower() == 'error':
                changes['message'] = 'Error'
            conn.execute(INSTANCE_ACTIONS.update().where(
                INSTANCE_ACTIONS.c.id == row.action_id).values(**changes))

    def get_action(self, instance_uuid: str, request_id: str,
                   events: bool = False) -> dict[str, Any] | None:
        """The request's action on the instance (with its ``events``,
        newest first, if asked), or None."""
        with self.engine.connect() as conn:
            row = _action_row(conn, instance_uuid, request_id)
            if row is None:
                return None
            action = dict(row._mapping)
            if events:
                table = INSTANCE_ACTION_EVENTS
                query = table.select().where(
                    table.c.action_id == row.id).order_by(
                        table.c.start_time.desc(), table.c.id.desc())
                action['events'] = [dict(r._mapping)
                                    for r in conn.execute(query)]
        return action

    def list_actions(self, instance_uuid: str, limit: int | None = None,
                     after: dict[str, Any] | None = None,
                     changes_since: datetime.datetime | None = None,
                     changes_before: datetime.datetime | None = None
                     ) -> 'list[dict[str, Any]]':
        """The instance's actions, newest first: at most ``limit``, those
        that come after the action ``after`` (a page's marker), updated
        from ``changes_since`` and until ``changes_before``."""
        table = INSTANCE_ACTIONS
        query = table.select().where(
            table.c.instance_uuid == instance_uuid).order_by(
                table.c.start_time.desc(), table.c.id.desc())
        if after is not None:
            query = query.where(sa.or_(
                table.c.start_time < after['start_time'],
                sa.and_(table.c.start_time == after['start_time'],
                        table.c.id < after['id'])))
        if changes_since is not None:
            query = query.where(table.c.updated_at >= changes_since)
        if changes_before is not None:
            query = query.where(table.c.updated_at <= changes_before)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]

# -- flavors ----------------------------------------------------------------


def _flavor(row: sa.Row, specs: dict[str, str]) -> Flavor:
    values = dict(row._mapping)
    return Flavor(name=values['name'], vcpus=values['vcpus'],
                  memory_mb=values['memory_mb'], disk_gb=values['root_gb'],
                  extra_specs=specs, flavorid=values['flavorid'],
                  ephemeral_gb=values['ephemeral_gb'], swap=values['swap'],
                  rxtx_factor=values['rxtx_factor'],
                  is_public=values['is_public'],
                  disabled=values['disabled'],
                  description=values['description'])


def _specs(conn, ids: list[int]) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {i: {} for i in ids}
    if ids:
        for row in conn.execute(FLAVOR_EXTRA_SPECS.select().where(
                FLAVOR_EXTRA_SPECS.c.flavor_id.in_(ids))):
            found[row.flavor_id][row.key] = row.value
    return found


def _flavor_row(conn, ref: str) -> sa.Row:
    """The flavor whose id is ``ref``, else the one so named."""
    for column in (FLAVORS.c.flavorid, FLAVORS.c.name):
        row = conn.execute(FLAVORS.select().where(column == ref)).first()
        if row is not None:
            return row
    raise exception.FlavorNotFound(flavor_id=ref)


# -- instance actions -------------------------------------------------------


def _action_row(conn, instance_uuid: str, request_id: str) -> sa.Row | None:
    """The newest action of the request on the instance, as Nova picks
    it."""
    return conn.execute(INSTANCE_ACTIONS.select().where(
        INSTANCE_ACTIONS.c.instance_uuid == instance_uuid,
        INSTANCE_ACTIONS.c.request_id == request_id).order_by(
            INSTANCE_ACTIONS.c.start_time.desc(),
            INSTANCE_ACTIONS.c.id.desc())).first()
