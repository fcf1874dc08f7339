"""alembic environment: runs on the connection handed over in code."""

from alembic import context

from nova_shim.db import models

connection = context.config.attributes['connection']
context.configure(connection=connection, target_metadata=models.METADATA,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
