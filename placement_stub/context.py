"""The request context: identity, microversion and the DB facade."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """One per request; DB functions take it first.

    ``facade`` is the app's own enginefacade transaction context, so each
    app (and each test fixture) has its own database.
    """

    def __init__(self, facade=None, version=(1, 0), **kwargs):
        super().__init__(**kwargs)
        self.facade = facade
        self.version = version
