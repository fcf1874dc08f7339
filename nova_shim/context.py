"""The request context nova_shim passes to its clients.

It is oslo.context's, as in Nova: who is acting (user, project, domain
or system scope, roles), the credentials that came with the request (the
user's token and, when the caller is a service, its service token) and
the request id, which oslo.log's context format and oslo.policy read
from it. nova_shim adds the caller's service catalog, and ``can``,
which asks the API's policy enforcer (as Nova's ``context.can``).
"""

import copy
from typing import Any, Callable

from oslo_context import context as oslo_context
from oslo_policy import policy

from nova_shim import exception


class RequestContext(oslo_context.RequestContext):
    """Who is acting, and with which credentials.

    ``service_catalog`` is a Keystone v3 catalog (a list of
    ``{"type": ..., "endpoints": [{"interface": ..., "url": ...}]}``),
    used to find endpoints when acting with the user's token and no
    ``endpoint_override`` is configured. ``is_admin`` is, unless given,
    whether ``roles`` hold ``admin``; the API sets it from the policy
    rule ``context_is_admin``, as Nova does. ``enforcer`` is the API's
    oslo.policy enforcer (None in contexts made for the service's own
    work, which ``can`` refuses nothing).
    """

    def __init__(self, user_id: str | None = None,
                 project_id: str | None = None,
                 roles: list[str] | None = None, *,
                 service_catalog: list[dict] | None = None,
                 enforcer: Any = None, is_admin: bool | None = None,
                 **kwargs: Any) -> None:
        roles = list(roles or [])
        if is_admin is None:
            is_admin = 'admin' in roles
        super().__init__(user_id=user_id, project_id=project_id,
                         roles=roles, is_admin=is_admin, **kwargs)
        self.service_catalog = list(service_catalog or [])
        self.enforcer = enforcer

    def replaced(self, **changes: Any) -> 'RequestContext':
        """A copy of this context with some attributes changed."""
        other = copy.copy(self)
        for name, value in changes.items():
            setattr(other, name, value)
        return other

    def can(self, action: str, target: dict | None = None,
            fatal: bool = True) -> bool:
        """Whether the policy lets this caller do ``action`` on
        ``target`` (by default its own project and user); with
        ``fatal``, PolicyNotAuthorized (a 403) when it does not.

        A token whose scope (system, domain) the rule's ``scope_types``
        do not list is refused the same way.
        """
        if self.enforcer is None:
            return True
        if target is None:
            target = {'project_id': self.project_id,
                      'user_id': self.user_id}
        try:
            allowed = self.enforcer.authorize(action, target, self)
        except policy.InvalidScope:
            allowed = False
        if not allowed and fatal:
            raise exception.PolicyNotAuthorized(action=action)
        return allowed


def get_admin_context(project_id: str | None = None) -> RequestContext:
    """A context for work the service does on its own behalf. It does
    not replace the thread's current context, whose request the log
    lines keep naming."""
    return RequestContext(user_id=None, project_id=project_id,
                          roles=['admin'], is_admin=True, overwrite=False)


def in_current_context(target: Callable[..., Any]) -> Callable[..., Any]:
    """``target``, run with the calling thread's current context (the
    request's, which oslo.log's lines name) as its own: for the work a
    request hands to another thread."""
    current = oslo_context.get_current()

    def run(*args: Any, **kwargs: Any) -> Any:
        if current is not None:
            current.update_store()
        return target(*args, **kwargs)
    return run
