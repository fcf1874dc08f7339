"""The request context: who is calling, as plain data.

It travels from the API to the conductor as a dict (``to_dict``), so the
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

import dataclasses
import uuid

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


@dataclasses.dataclass
class RequestContext:
    project_id: str | None = None
    user_id: str | None = None
    roles: list[str] = dataclasses.field(default_factory=list)
    service_roles: list[str] = dataclasses.field(default_factory=list)
    request_id: str = dataclasses.field(
        default_factory=lambda: 'req-' + str(uuid.uuid4()))
    is_admin: bool = False
    # True when a service token with an accepted role came with the
    # request (set by the API from [api] service_token_roles).
    is_service: bool = False
    # The other token scopes: 'all' for a system-scoped token; the
    # domain's id for a domain-scoped one.
    system_scope: str | None = None
    domain_id: str | None = None

    def __post_init__(self):
        self.is_admin = self.is_admin or any(
            role.lower() == 'admin' for role in self.roles)

    def to_dict(self) -> dict:
        # Built by hand: dataclasses.asdict deep-copies field by field,
        # and this runs on every RPC call.
        return {'project_id': self.project_id, 'user_id': self.user_id,
                'roles': list(self.roles),
                'service_roles': list(self.service_roles),
                'request_id': self.request_id, 'is_admin': self.is_admin,
                'is_service': self.is_service,
                'system_scope': self.system_scope,
                'domain_id': self.domain_id}

    @classmethod
    def from_dict(cls, data: dict) -> RequestContext:
        return cls(**{k: v for k, v in (data or {}).items()
                      if k in _FIELDS})

    def to_policy_values(self) -> dict:
        """The credentials oslo.policy checks, with the token's scope
        (``system_scope``, ``domain_id``) for its scope_types check."""
        return {'project_id': self.project_id, 'user_id': self.user_id,
                'roles': list(self.roles), 'is_admin': self.is_admin,
                'service_roles': list(self.service_roles),
                'system_scope': self.system_scope,
                'domain_id': self.domain_id}

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
        """A context for the services' own work (sweeps, reports)."""
        return cls(project_id=None, roles=['admin'],
                   service_roles=['service'], is_service=True,
                   system_scope='all')


_FIELDS = frozenset(f.name for f in dataclasses.fields(RequestContext))


class ContextSerializer(oslo_messaging.NoOpSerializer):
    """Carries a RequestContext over RPC as a plain dict."""

    def serialize_context(self, context):
        if isinstance(context, RequestContext):
            return context.to_dict()
        return context

    def deserialize_context(self, context):
        return RequestContext.from_dict(context)
