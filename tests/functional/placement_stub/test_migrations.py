"""The alembic migrations and the models describe the same schema."""

from alembic import autogenerate
from alembic import migration
import sqlalchemy as sa

from placement_stub.db import api as db_api
from placement_stub.db import models


def test_models_and_migrations_agree(db_url):
    engine = sa.create_engine(db_url)
    try:
        db_api.upgrade(engine)
        with engine.connect() as conn:
            context = migration.MigrationContext.configure(conn)
            diff = autogenerate.compare_metadata(context,
                                                 models.Base.metadata)
    finally:
        engine.dispose()
    assert diff == []
