"""Alembic environment: runs on the connection the caller hands over."""

from alembic import context

from placement_stub.db import models

target_metadata = models.Base.metadata


def run_migrations_online():
    connection = context.config.attributes['connection']
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
