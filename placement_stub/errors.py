"""HTTP errors in Placement's JSON format, and the domain-to-HTTP table.

Every error body is ``{"errors": [{"status", "title", "detail", "code",
"request_id"}]}``, as real Placement sends it.
"""

import functools

from oslo_db import exception as db_exc
import webob.exc

from placement_stub import exception
from placement_stub import microversion as mv
from placement_stub import policies

DEFAULT = 'placement.undefined_code'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
INVENTORY_INUSE = 'placement.inventory.inuse'
PROVIDER_IN_USE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = (
    'placement.resource_provider.cannot_delete_parent')
RESOURCE_PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
QUERYPARAM_DUPLICATE = 'placement.query.duplicate_key'
QUERYPARAM_BAD_VALUE = 'placement.query.bad_value'
QUERYPARAM_MISSING_VALUE = 'placement.query.missing_value'

# Domain exception -> (HTTP exception, error code); the first match wins.
EXCEPTION_MAP = [
    (exception.NotFound, webob.exc.HTTPNotFound, DEFAULT),
    # A write that lost to a concurrent one in the database (a row both
    # inserted, a deadlock, a row the other deleted): the client may try
    # again, as after a generation conflict.
    (db_exc.DBDuplicateEntry, webob.exc.HTTPConflict, CONCURRENT_UPDATE),
    (db_exc.DBDeadlock, webob.exc.HTTPConflict, CONCURRENT_UPDATE),
    (db_exc.DBReferenceError, webob.exc.HTTPConflict, CONCURRENT_UPDATE),
    (exception.ConcurrentUpdate, webob.exc.HTTPConflict, CONCURRENT_UPDATE),
    (exception.DuplicateName, webob.exc.HTTPConflict, DUPLICATE_NAME),
    (exception.ProviderInUse, webob.exc.HTTPConflict, PROVIDER_IN_USE),
    (exception.CannotDeleteParent, webob.exc.HTTPConflict,
     PROVIDER_CANNOT_DELETE_PARENT),
    (exception.InventoryInUse, webob.exc.HTTPConflict, INVENTORY_INUSE),
    (exception.Conflict, webob.exc.HTTPConflict, DEFAULT),
    (exception.InvalidInput, webob.exc.HTTPBadRequest, DEFAULT),
    (policies.PolicyNotAuthorized, webob.exc.HTTPForbidden, DEFAULT),
]


def _json_formatter(body, status, title, environ, code=DEFAULT,
                    extra=None):
    """Shape a webob error as Placement does; ``extra`` adds fields."""
    try:
        status_code = int(status.split(None, 1)[0])
    except (ValueError, IndexError):
        status_code = 500
    error = {'status': status_code, 'title': title,
             'detail': webob.exc.strip_tags(body),
             'request_id': environ.get('openstack.request_id')}
    # The error code came with microversion 1.23: an earlier request (or
    # one refused before its version was read) gets none, as Placement.
    version = environ.get(mv.ENVIRON_KEY)
    if code is not None and version is not None and version >= (1, 23):
        error['code'] = code
    error.update(extra or {})
    return {'errors': [error]}


def http(exc_class, detail, code=DEFAULT, extra=None, **kwargs):
    """A webob HTTP exception whose body is Placement's error JSON."""
    formatter = functools.partial(_json_formatter, code=code, extra=extra)
    return exc_class(detail=detail, json_formatter=formatter, **kwargs)


def unacceptable_version(requested):
    """406 for a microversion outside those served, with the range that
    is (``max_version``, ``min_version``), as Placement answers it."""
    return http(webob.exc.HTTPNotAcceptable,
                'Unacceptable version header: %s' % requested,
                extra={'max_version': mv.version_string(mv.MAX_VERSION),
                       'min_version': mv.version_string(mv.MIN_VERSION)})


def bad_request(detail, code=DEFAULT):
    return http(webob.exc.HTTPBadRequest, detail, code)


def not_found(detail, code=DEFAULT):
    return http(webob.exc.HTTPNotFound, detail, code)


def conflict(detail, code=DEFAULT):
    return http(webob.exc.HTTPConflict, detail, code)


def from_domain(exc: Exception):
    """The HTTP exception for a domain exception (or a database race),
    from EXCEPTION_MAP."""
    for domain_class, http_class, code in EXCEPTION_MAP:
        if isinstance(exc, domain_class):
            return http(http_class, str(exc), code)
    return http(webob.exc.HTTPInternalServerError, str(exc))
