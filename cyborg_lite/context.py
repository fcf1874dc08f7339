"""The request context: who is calling.

It is oslo.context's ``RequestContext``, as in every OpenStack service,
so that the request id, user and project reach oslo.log's context
format (``%(request_id)s [%(user_identity)s]``) and oslo.policy reads
its credentials with ``to_policy_values``. Creating one makes it the
thread's current context, which is how a log line written anywhere
during a request or an RPC call names them.

It travels from the API to the conductor as a small dict
(``to_rpc_dict``, the wire format of every RPC API version), so the
conductor can scope ARQs to the caller's project and tell admins and
services apart.

A token has one scope: a project (``project_id``), a domain
(``domain_id``) or the whole deployment (``system_scope = 'all'``).
Every API rule is project-scoped, so only a project-scoped caller gets
past policy; the conductor checks the same again (``scope_project``)
so that a caller without a project never sees a project's ARQs, whatever
a policy file says.
"""

from __future__ import annotations

from oslo_context import context as oslo_context
import oslo_messaging

from cyborg_lite import exception

# Keystone's default implied roles (``keystone-manage bootstrap``): each
# role brings the ones after it. Tokens from Keystone already list the
# implied roles; identities from noauth headers and http_basic files are
# expanded the same way, so that one policy file means the same in every
# authentication mode.
IMPLIED_ROLES = {
    'admin': ('manager', 'member', 'reader'),
    'manager': ('member', 'reader'),
    'member': ('reader',),
}


def with_implied_roles(roles: list[str]) -> list[str]:
    """``roles`` in lower case (oslo.policy compares role names without
    case, so must everything else: ``Admin`` is ``admin``) followed by
    the roles they imply, without repeats."""
    roles = [role.lower() for role in roles]
    expanded = list(dict.fromkeys(roles))
    for role in roles:
        for implied in IMPLIED_ROLES.get(role, ()):
            if implied not in expanded:
                expanded.append(implied)
    return expanded


# The keys of the RPC dict. A conductor ignores a key it does not know
# (``global_request_id`` is newer than RPC API 1.0).
RPC_FIELDS = ('project_id', 'user_id', 'roles', 'service_roles',
              'request_id', 'global_request_id', 'is_admin', 'is_service',
              'system_scope', 'domain_id')


class RequestContext(oslo_context.RequestContext):
    """Who is calling, and from which request.

    ``is_admin`` is, unless given, whether ``roles`` hold ``admin``.
    ``is_service`` is True when a service token with an accepted role
    came with the request (the API sets it from ``[api]
    service_token_roles``).
    """

    def __init__(self, project_id: str | None = None,
                 user_id: str | None = None,
                 roles: list[str] | None = None,
                 service_roles: list[str] | None = None,
                 request_id: str | None = None, is_admin: bool = False,
                 is_service: bool = False, system_scope: str | None = None,
                 domain_id: str | None = None,
                 global_request_id: str | None = None,
                 overwrite: bool = True) -> None:
        roles = list(roles or [])
        super().__init__(
            project_id=project_id, user_id=user_id, roles=roles,
            service_roles=list(service_roles or []),
            request_id=request_id, global_request_id=global_request_id,
            is_admin=is_admin or any(r.lower() == 'admin' for r in roles),
            system_scope=system_scope, domain_id=domain_id,
            overwrite=overwrite)
        self.is_service = is_service

    def to_rpc_dict(self) -> dict:
        """What the RPC calls carry. Built by hand: it runs on every
        call, and oslo.context's ``to_dict`` holds twice the keys."""
        return {'project_id': self.project_id, 'user_id': self.user_id,
                'roles': list(self.roles),
                'service_roles': list(self.service_roles),
                'request_id': self.request_id,
                'global_request_id': self.global_request_id,
                'is_admin': self.is_admin, 'is_service': self.is_service,
                'system_scope': self.system_scope,
                'domain_id': self.domain_id}

    @classmethod
    def from_rpc_dict(cls, data: dict | None) -> RequestContext:
        """The context ``to_rpc_dict`` sent; unknown keys are ignored,
        so that a newer API's calls reach an older conductor."""
        return cls(**{k: v for k, v in (data or {}).items()
                      if k in _RPC_FIELD_SET})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RequestContext):
            return NotImplemented
        return self.to_rpc_dict() == other.to_rpc_dict()

    __hash__ = None

    def __repr__(self) -> str:
        return 'RequestContext(%s)' % ', '.join(
            '%s=%r' % item for item in self.to_rpc_dict().items())

    def to_policy_values(self):
        """oslo.context's credentials for oslo.policy (the token's
        scope included, for its ``scope_types`` check), and
        ``is_admin``, which cyborg-lite's rules may name."""
        values = super().to_policy_values()
        values['is_admin'] = self.is_admin
        return values

    @property
    def project_scoped(self) -> bool:
        return bool(self.project_id) and not (self.system_scope or
                                              self.domain_id)

    @property
    def scope_project(self) -> str | None:
        """The project whose ARQs this caller may see; None means all.

        An admin sees every project's ARQs, as upstream's ``admin_api``
        rule allows; the services' own context (``admin``) is a
        system-scoped admin. Any other caller sees its own project's
        ARQs, and one with no project of its own (a domain-scoped token,
        a system-scoped reader) is refused.
        """
        if self.is_admin and (self.project_scoped or self.system_scope):
            return None
        return self.owner_project

    @property
    def owner_project(self) -> str:
        """The project that ARQs this caller creates belong to."""
        if not self.project_scoped:
            raise exception.Forbidden(
                reason='accelerator requests belong to projects: a token '
                       'scoped to a project is needed')
        return self.project_id

    @classmethod
    def admin(cls) -> RequestContext:
        """A context for the services' own work (sweeps, reports). It
        does not replace the thread's current context, whose request
        the log lines keep naming."""
        return cls(project_id=None, roles=['admin'],
                   service_roles=['service'], is_service=True,
                   system_scope='all', overwrite=False)


_RPC_FIELD_SET = frozenset(RPC_FIELDS)


class ContextSerializer(oslo_messaging.NoOpSerializer):
    """Carries a RequestContext over RPC as a plain dict."""

    def serialize_context(self, context):
        if isinstance(context, RequestContext):
            return context.to_rpc_dict()
        return context

    def deserialize_context(self, context):
        return RequestContext.from_rpc_dict(context)
