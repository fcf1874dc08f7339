"""``GET /os-migrations``: the cold migrations and resizes, as Nova's
API lists them (``openstack server migration list``).

Rules, as Nova 34's: ``os_compute_api:os-migrations:index`` (a
project's manager or an admin); ``:index:all_projects`` (an admin) unless
``project_id`` names the caller's own project; ``:index:host`` (an
admin) to see the hosts and nodes, which are null to anyone else.

Filters: ``instance_uuid``, ``status``, ``migration_type``,
``source_compute``; from 2.80 ``project_id`` and ``user_id``. From 2.59
the list pages as Nova's (``limit``, ``marker`` (a migration's uuid),
``changes-since``; ``changes-before`` from 2.66) and each migration
shows its ``uuid``; from 2.23 its ``migration_type``; from 2.80 its
``project_id`` and ``user_id``. Other query parameters are ignored, as
Nova's schema lets them through. Nova's ``dest_host`` (the destination's
IP address) and flavors' internal ids are null: nova_shim keeps
neither.
"""

from typing import Any
import urllib.parse

import webob

from nova_shim.api import http
from nova_shim.compute.manager import ComputeManager
from nova_shim import exception
from nova_shim.objects import Migration
from nova_shim.policies import migrations as migration_policies

MIGRATION_TYPE = (2, 23)
PAGING = (2, 59)
CHANGES_BEFORE = (2, 66)
USER_AND_PROJECT = (2, 80)
MAX_LIMIT = 1000
_TIME_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'
_HOST_KEYS = ('source_compute', 'source_node', 'dest_compute', 'dest_node')


def view(migration: Migration, version: tuple[int, int],
         with_hosts: bool) -> dict[str, Any]:
    shown: dict[str, Any] = {
        'id': migration.id, 'status': migration.status,
        'instance_uuid': migration.instance_uuid, 'dest_host': None,
        'old_instance_type_id': None, 'new_instance_type_id': None,
        'created_at': migration.created_at.strftime(_TIME_FORMAT),
        'updated_at': migration.updated_at.strftime(_TIME_FORMAT)}
    for key in _HOST_KEYS:
        shown[key] = getattr(migration, key) if with_hosts else None
    if version >= MIGRATION_TYPE:
        shown['migration_type'] = migration.migration_type
    if version >= PAGING:
        shown['uuid'] = migration.uuid
    if version >= USER_AND_PROJECT:
        shown['project_id'] = migration.project_id
        shown['user_id'] = migration.user_id
    return shown


def _filters(req: webob.Request, version: tuple[int, int]) -> dict:
    names = ['instance_uuid', 'status', 'migration_type', 'source_compute']
    if version >= USER_AND_PROJECT:
        names += ['project_id', 'user_id']
    return {name: http.query_value(req, name) for name in names}


def _authorize(req: webob.Request, project_id: str | None) -> bool:
    """Check the rules; whether the caller sees the hosts."""
    # As Nova, each rule's target is the caller's own project.
    ctx = http.request_context(req)
    ctx.can(migration_policies.MIGRATIONS % 'index')
    if not project_id or project_id != ctx.project_id:
        ctx.can(migration_policies.MIGRATIONS % 'index:all_projects')
    return ctx.can(migration_policies.MIGRATIONS % 'index:host', fatal=False)


def _page(req: webob.Request, found: list[Migration],
          version: tuple[int, int]) -> tuple[list[Migration], int]:
    """The page of ``found`` (newest first) the query asks for, and its
    limit."""
    since = http.query_time(req, 'changes-since')
    before = (http.query_time(req, 'changes-before')
              if version >= CHANGES_BEFORE else None)
    if since and before and before < since:
        raise exception.InvalidRequest(
            'The value of changes-since must be less than or equal to '
            'changes-before.')
    found = [m for m in found
             if (since is None or m.updated_at >= since) and
             (before is None or m.updated_at <= before)]
    marker = http.query_value(req, 'marker')
    if marker is not None:
        uuids = [m.uuid for m in found]
        if marker not in uuids:
            raise exception.InvalidRequest(
                'Marker %s could not be found.' % marker)
        found = found[uuids.index(marker) + 1:]
    limit = http.query_limit(req, MAX_LIMIT)
    return found[:limit], limit


def list_migrations(req: webob.Request,
                    manager: ComputeManager) -> webob.Response:
    version = req.environ.get(http.VERSION_KEY, (2, 1))
    filters = _filters(req, version)
    with_hosts = _authorize(req, filters.get('project_id'))
    found = manager.list_migrations(**filters)
    body: dict[str, Any] = {}
    if version >= PAGING:
        found, limit = _page(req, found, version)
        if limit and len(found) == limit:
            params = dict(sorted(req.GET.items()))
            params['marker'] = found[-1].uuid
            body['migrations_links'] = [{
                'rel': 'next', 'href': '%s/v2.1/os-migrations?%s' % (
                    req.application_url.rstrip('/'),
                    urllib.parse.urlencode(params))}]
    body['migrations'] = [view(m, version, with_hosts) for m in found]
    return http.json_response(body)
