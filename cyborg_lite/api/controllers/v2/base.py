"""Small helpers every v2 controller uses."""

import pecan

from cyborg_lite import policies
from cyborg_lite.api import views


def expose_no_body(handler):
    """Expose a handler that answers with no body (202, 204, an empty
    200), whether the client accepts JSON or anything else: Pecan
    refuses with 406 an ``Accept`` that a bare ``expose()`` does not
    list, and clients send ``Accept: application/json``."""
    return pecan.expose(content_type='text/html')(
        pecan.expose(content_type='application/json')(handler))


def authorize(rule):
    """Check a policy rule for the current caller; returns its context."""
    ctx = pecan.request.ctx
    policies.authorize(pecan.request.enforcer, rule, ctx)
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


def query(name, default=None):
    return pecan.request.GET.get(name, default)
