"""The request context nova_shim passes to its clients.

It says who is acting (user, project, roles) and carries the credentials
that came with the request: the user's token and, when the caller is a
service, its service token. It does no I/O.
"""

import dataclasses
import uuid


def _request_id() -> str:
    return 'req-' + str(uuid.uuid4())


@dataclasses.dataclass
class RequestContext:
    """Who is acting, and with which credentials.

    ``service_catalog`` is a Keystone v3 catalog (a list of
    ``{"type": ..., "endpoints": [{"interface": ..., "url": ...}]}``),
    used to find endpoints when acting with the user's token and no
    ``endpoint_override`` is configured.
    """

    user_id: str | None
    project_id: str | None
    roles: list[str] = dataclasses.field(default_factory=list)
    auth_token: str | None = None
    service_token: str | None = None
    service_roles: list[str] = dataclasses.field(default_factory=list)
    service_catalog: list[dict] = dataclasses.field(default_factory=list)
    request_id: str = dataclasses.field(default_factory=_request_id)

    @property
    def is_admin(self) -> bool:
        return 'admin' in self.roles


def get_admin_context(project_id: str | None = None) -> RequestContext:
    """A context for work the service does on its own behalf."""
    return RequestContext(user_id=None, project_id=project_id,
                          roles=['admin'])
