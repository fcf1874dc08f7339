"""The base class and small helpers every v2 controller uses."""

import pecan

from cyborg_lite import exception
from cyborg_lite import policies
from cyborg_lite.api import views


class Controller:
    """A collection's handlers: ``get_all``, ``get_one``, ``post``,
    ``patch``, ``delete`` and actions, each exposed to Pecan. The root
    controller's route table (``cyborg_lite.api.controllers.root``)
    picks the handler; nothing here is routed by attribute, so a path
    segment is never taken for an attribute of a controller.
    """


def expose_no_body(handler):
    """Expose a handler that answers with no body (202, 204, an empty
    200), whether the client accepts JSON or anything else: Pecan
    refuses with 406 an ``Accept`` that a bare ``expose()`` does not
    list, and clients send ``Accept: application/json``."""
    return pecan.expose(content_type='text/html')(
        pecan.expose(content_type='application/json')(handler))


# The longest project or user id the API keeps: the length of the ARQ
# table's project_id column (a longer one failed in PostgreSQL).
MAX_IDENTITY_LENGTH = 255


def authorize(rule):
    """Check a policy rule for the current caller; returns its context.

    An identity longer than the API keeps (only possible where the
    client names it, with ``noauth``) is a 400."""
    ctx = pecan.request.ctx
    policies.authorize(pecan.request.enforcer, rule, ctx)
    for name, value in (('project', ctx.project_id), ('user', ctx.user_id)):
        if value is not None and len(value) > MAX_IDENTITY_LENGTH:
            raise exception.Invalid(
                reason='The caller\'s %s id is longer than %d characters.'
                % (name, MAX_IDENTITY_LENGTH))
    return ctx


def base_url():
    return views.base_url(pecan.request, pecan.request.conf)


def set_status(status):
    """Pecan's ``expose(status_code=...)`` is ignored: set it here."""
    pecan.response.status = status


def no_content():
    pecan.response.status = 204
    pecan.response.content_type = None
    return ''


def empty_ok():
    """200 with an empty body (upstream's device enable/disable). Pecan
    turns an empty 200 into a 204 unless the body is a generator."""
    pecan.response.status = 200
    pecan.response.content_type = None
    pecan.response.app_iter = (chunk for chunk in (b'',))
    return ''


def path_id(path):
    """The object id of a handler's path segments (``*path``), or None
    for the collection.

    Handlers whose id is optional take their path as ``*path``: Pecan
    fills a named argument that the path leaves out from the query
    string or the JSON body's keys, where it may be a list, a number or
    an object. ``RequestGuard`` has checked
    the path's shape against its route.
    """
    return path[0] if path else None


def query(name, default=None):
    return pecan.request.GET.get(name, default)
