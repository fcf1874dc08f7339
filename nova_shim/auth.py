"""keystoneauth1 auth plugins for nova_shim's clients.

nova_shim reaches Cyborg and Placement through keystoneauth1 adapters
whatever the authentication, so that one code path serves every mode.
``get_auth_plugin`` picks the plugin from ``auth_type`` in the
client's option group:

==============  ======================================================
``auth_type``   plugin
==============  ======================================================
unset           ``ContextTokenAuth``: the user's token from the
                request context, as Nova does
``none``        ``NoAuthHeaders``: identity headers for a noauth
                cyborg-lite API (needs ``endpoint_override``)
anything else   the keystoneauth1 plugin loaded from the group's
                options (``password``, ``http_basic``, ...)
==============  ======================================================

When ``[service_user] send_service_user_token`` is true, a service
token goes with each request: from ``[service_user]`` credentials when
they are configured, otherwise from the context; the noauth headers
then also carry ``X-Service-Roles: service``.
"""

from typing import Any

from keystoneauth1.access import service_catalog
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import plugin
from keystoneauth1 import service_token
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from oslo_config import cfg

from nova_shim.context import RequestContext

SERVICE_USER_GROUP = 'service_user'


class NoAuthHeaders(plugin.FixedEndpointPlugin):
    """Send who is acting as plain headers, for a noauth API.

    The headers are the ones keystonemiddleware would set after checking
    a token: ``X-Project-Id``, ``X-User-Id``, ``X-Roles`` and, for a
    service, ``X-Service-Roles``.
    """

    def __init__(self, project_id: str | None, user_id: str | None,
                 roles: list[str], service_roles: list[str] | None = None,
                 endpoint: str | None = None) -> None:
        super().__init__(endpoint)
        self.project_id = project_id
        self.user_id = user_id
        self.roles = list(roles)
        self.service_roles = list(service_roles or [])

    def get_headers(self, session: ks_session.Session) -> dict[str, str]:
        headers = {'X-Roles': ','.join(self.roles)}
        if self.project_id:
            headers['X-Project-Id'] = self.project_id
        if self.user_id:
            headers['X-User-Id'] = self.user_id
        if self.service_roles:
            headers['X-Service-Roles'] = ','.join(self.service_roles)
        return headers

    def get_user_id(self, session: ks_session.Session) -> str | None:
        return self.user_id

    def get_project_id(self, session: ks_session.Session) -> str | None:
        return self.project_id


class ContextTokenAuth(plugin.BaseAuthPlugin):
    """The user's token, with endpoints from the user's service catalog."""

    def __init__(self, token: str | None, catalog: list[dict]) -> None:
        super().__init__()
        self.token = token
        self.catalog = catalog

    def get_token(self, session: ks_session.Session) -> str | None:
        return self.token

    def get_endpoint(self, session: ks_session.Session,
                     service_type: str | None = None,
                     interface: Any = None, region_name: str | None = None,
                     service_name: str | None = None,
                     **kwargs: Any) -> str | None:
        catalog = service_catalog.ServiceCatalogV3(self.catalog)
        interfaces = interface if isinstance(interface, list) else [interface]
        for each in interfaces:
            urls = catalog.get_urls(service_type=service_type,
                                    interface=each or 'public',
                                    region_name=region_name,
                                    service_name=service_name)
            if urls:
                return urls[0]
        return None


def get_auth_plugin(conf: cfg.ConfigOpts, group: str,
                    context: RequestContext) -> plugin.BaseAuthPlugin:
    """The auth plugin for calls made on behalf of ``context``."""
    send_service_token = conf[SERVICE_USER_GROUP].send_service_user_token
    auth_type = conf[group].auth_type
    if auth_type is None:
        user_auth = ContextTokenAuth(context.auth_token,
                                     context.service_catalog)
    elif auth_type == 'none':
        user_auth = NoAuthHeaders(
            context.project_id, context.user_id, context.roles,
            service_roles=['service'] if send_service_token else None,
            endpoint=conf[group].endpoint_override)
    else:
        user_auth = ks_loading.load_auth_from_conf_options(conf, group)
    if not send_service_token:
        return user_auth
    service_auth = ks_loading.load_auth_from_conf_options(
        conf, SERVICE_USER_GROUP)
    if service_auth is None and context.service_token:
        service_auth = token_endpoint.Token(None, context.service_token)
    if service_auth is None:
        return user_auth
    return service_token.ServiceTokenAuthWrapper(user_auth, service_auth)


def get_service_auth_plugin(conf: cfg.ConfigOpts,
                            group: str) -> plugin.BaseAuthPlugin | None:
    """The plugin for calls the service makes on its own behalf.

    ``auth_type = none`` sends no credentials; unset also sends none.
    """
    return ks_loading.load_auth_from_conf_options(conf, group)


def load_adapter(conf: cfg.ConfigOpts, group: str,
                 auth_plugin: plugin.BaseAuthPlugin,
                 **kwargs: Any) -> ks_adapter.Adapter:
    """An adapter from ``group``'s session and adapter options with
    ``auth_plugin``; it returns error responses rather than raising."""
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth_plugin)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth_plugin, raise_exc=False,
        **kwargs)
