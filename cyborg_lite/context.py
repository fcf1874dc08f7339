"""The request context: who is calling, as plain data.

It travels from the API to the conductor as a dict (``to_dict``), so the
conductor can scope ARQs to the caller's project and tell admins and
services apart.
"""

from __future__ import annotations

import dataclasses
import uuid

import oslo_messaging


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

    def __post_init__(self):
        self.is_admin = self.is_admin or 'admin' in self.roles

    def to_dict(self) -> dict:
        # Built by hand: dataclasses.asdict deep-copies field by field,
        # and this runs on every RPC call.
        return {'project_id': self.project_id, 'user_id': self.user_id,
                'roles': list(self.roles),
                'service_roles': list(self.service_roles),
                'request_id': self.request_id, 'is_admin': self.is_admin,
                'is_service': self.is_service}

    @classmethod
    def from_dict(cls, data: dict) -> RequestContext:
        return cls(**{k: v for k, v in (data or {}).items()
                      if k in _FIELDS})

    def to_policy_values(self) -> dict:
        return {'project_id': self.project_id, 'user_id': self.user_id,
                'roles': list(self.roles), 'is_admin': self.is_admin,
                'service_roles': list(self.service_roles)}

    @property
    def scope_project(self) -> str | None:
        """The project whose ARQs this caller may see; None means all."""
        return None if self.is_admin else self.project_id

    @classmethod
    def admin(cls) -> RequestContext:
        """A context for the services' own work (sweeps, reports)."""
        return cls(project_id=None, roles=['admin'],
                   service_roles=['service'], is_service=True)


_FIELDS = frozenset(f.name for f in dataclasses.fields(RequestContext))


class ContextSerializer(oslo_messaging.NoOpSerializer):
    """Carries a RequestContext over RPC as a plain dict."""

    def serialize_context(self, context):
        if isinstance(context, RequestContext):
            return context.to_dict()
        return context

    def deserialize_context(self, context):
        return RequestContext.from_dict(context)
