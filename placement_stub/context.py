"""The request context: identity, microversion and the DB facade."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade

from placement_stub import policies


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """One per request; DB functions take it first.

    ``facade`` is the app's own enginefacade transaction context, so each
    app (and each test fixture) has its own database.
    """

    def __init__(self, facade=None, version=(1, 0), enforcer=None,
                 config=None, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.facade = facade
        self.version = version
        self.enforcer = enforcer

    def can(self, action, target=None):
        """Raise PolicyNotAuthorized (a 403) unless the caller may do
        ``action`` on ``target`` (by default its own project)."""
        policies.authorize(self.enforcer, self, action, target)
