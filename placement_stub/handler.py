"""The route table and the dispatcher.

ROUTES is the one place that says which handler serves which method and
path. Handlers raise domain exceptions or webob errors; the dispatcher
turns both into Placement's JSON errors.
"""

import re

from oslo_db import exception as db_exc
import webob
import webob.exc

from placement_stub import errors
from placement_stub import exception
from placement_stub.handlers import aggregate
from placement_stub.handlers import allocation
from placement_stub.handlers import allocation_candidate
from placement_stub.handlers import inventory
from placement_stub.handlers import resource_class
from placement_stub.handlers import reshaper
from placement_stub.handlers import resource_provider
from placement_stub.handlers import root
from placement_stub.handlers import trait
from placement_stub.handlers import usage
from placement_stub import request_groups

ROUTE_DECLARATIONS = [
    ('/', {'GET': root.home}),
    ('/resource_providers', {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider}),
    ('/resource_providers/{uuid}', {
        'GET': resource_provider.get_resource_provider,
        'PUT': resource_provider.update_resource_provider,
        'DELETE': resource_provider.delete_resource_provider}),
    ('/resource_providers/{uuid}/inventories', {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': inventory.delete_inventories}),
    ('/resource_providers/{uuid}/inventories/{resource_class}', {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory}),
    ('/resource_providers/{uuid}/usages', {'GET': usage.list_usages}),
    ('/resource_providers/{uuid}/aggregates', {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates}),
    ('/resource_providers/{uuid}/allocations', {
        'GET': allocation.list_for_resource_provider}),
    ('/resource_providers/{uuid}/traits', {
        'GET': trait.list_provider_traits,
        'PUT': trait.update_provider_traits,
        'DELETE': trait.delete_provider_traits}),
    ('/resource_classes', {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class}),
    ('/resource_classes/{name}', {
        'GET': resource_class.get_resource_class,
        'PUT': resource_class.update_resource_class,
        'DELETE': resource_class.delete_resource_class}),
    ('/traits', {'GET': trait.list_traits}),
    ('/traits/{name}', {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait}),
    ('/allocations', {'POST': allocation.set_allocations}),
    ('/allocations/{consumer_uuid}', {
        'GET': allocation.list_for_consumer,
        'PUT': allocation.set_allocations_for_consumer,
        'DELETE': allocation.delete_allocations}),
    ('/allocation_candidates', {
        'GET': allocation_candidate.list_allocation_candidates}),
    ('/usages', {'GET': usage.get_total_usages}),
    ('/reshaper', {'POST': reshaper.reshape}),
]


# The policy rule each handler asks before it runs (Placement's names);
# GET /usages asks its own, with the project it reads as the target.
RP = 'placement:resource_providers:'
POLICIES = {
    resource_provider.list_resource_providers: RP + 'list',
    resource_provider.create_resource_provider: RP + 'create',
    resource_provider.get_resource_provider: RP + 'show',
    resource_provider.update_resource_provider: RP + 'update',
    resource_provider.delete_resource_provider: RP + 'delete',
    inventory.get_inventories: RP + 'inventories:list',
    inventory.create_inventory: RP + 'inventories:create',
    inventory.set_inventories: RP + 'inventories:update',
    inventory.delete_inventories: RP + 'inventories:delete',
    inventory.get_inventory: RP + 'inventories:show',
    inventory.update_inventory: RP + 'inventories:update',
    inventory.delete_inventory: RP + 'inventories:delete',
    usage.list_usages: RP + 'usages',
    aggregate.get_aggregates: RP + 'aggregates:list',
    aggregate.set_aggregates: RP + 'aggregates:update',
    allocation.list_for_resource_provider: RP + 'allocations:list',
    trait.list_provider_traits: RP + 'traits:list',
    trait.update_provider_traits: RP + 'traits:update',
    trait.delete_provider_traits: RP + 'traits:delete',
    resource_class.list_resource_classes: 'placement:resource_classes:list',
    resource_class.create_resource_class:
        'placement:resource_classes:create',
    resource_class.get_resource_class: 'placement:resource_classes:show',
    resource_class.update_resource_class:
        'placement:resource_classes:update',
    resource_class.delete_resource_class:
        'placement:resource_classes:delete',
    trait.list_traits: 'placement:traits:list',
    trait.get_trait: 'placement:traits:show',
    trait.put_trait: 'placement:traits:update',
    trait.delete_trait: 'placement:traits:delete',
    allocation.set_allocations: 'placement:allocations:manage',
    allocation.list_for_consumer: 'placement:allocations:list',
    allocation.set_allocations_for_consumer: 'placement:allocations:update',
    allocation.delete_allocations: 'placement:allocations:delete',
    allocation_candidate.list_allocation_candidates:
        'placement:allocation_candidates:list',
    reshaper.reshape: 'placement:reshaper:reshape',
}


def _compile(template):
    pattern = re.sub(r'\{(\w+)\}', r'(?P<\1>[^/]+)', template)
    return re.compile('^%s$' % pattern)


ROUTES = [(_compile(path), methods) for path, methods in ROUTE_DECLARATIONS]


def _route(req):
    path = req.path_info
    if len(path) > 1:
        path = path.rstrip('/')
    for regex, methods in ROUTES:
        match = regex.match(path)
        if match is None:
            continue
        handler = methods.get(req.method)
        if handler is None:
            raise errors.http(
                webob.exc.HTTPMethodNotAllowed,
                'The method specified is not allowed for this resource.',
                headers=[('Allow', ', '.join(sorted(methods)))])
        req.urlvars = match.groupdict()
        return handler
    raise errors.not_found('The resource could not be found.')


def _check_framing(req):
    """400 for a Content-Length that is not an integer, or a body with no
    Content-Type, as Placement answers them."""
    length = req.environ.get('CONTENT_LENGTH')
    try:
        has_body = bool(length) and int(length) > 0
    except ValueError:
        raise errors.bad_request('content-length header must be an integer')
    if has_body and not req.environ.get('CONTENT_TYPE'):
        raise errors.bad_request(
            'content-type header required when content-length > 0')


def _check_accept(req):
    """406 for a GET whose Accept header takes no JSON (the version
    document at ``/`` is served whatever it asks)."""
    accept = req.environ.get('placement.accept')
    if (req.method == 'GET' and req.path_info not in ('', '/')
            and accept is not None
            and not webob.acceptparse.create_accept_header(
                accept).acceptable_offers(['application/json'])):
        raise errors.http(webob.exc.HTTPNotAcceptable,
                          'Only application/json is provided')


def dispatch(environ, start_response):
    """WSGI app: route, call the handler, map errors to JSON."""
    req = webob.Request(environ)
    try:
        _check_framing(req)
        handler = _route(req)
        _check_accept(req)
        if handler in POLICIES:
            req.environ['placement.context'].can(POLICIES[handler])
        resp = handler(req)
    except (exception.PlacementException, db_exc.DBDuplicateEntry,
            db_exc.DBDeadlock, db_exc.DBReferenceError) as exc:
        resp = errors.from_domain(exc)
    except request_groups.QueryError as exc:
        resp = errors.bad_request(str(exc), exc.code)
    except webob.exc.HTTPException as exc:
        resp = exc
    environ['HTTP_ACCEPT'] = 'application/json'
    return resp(environ, start_response)
