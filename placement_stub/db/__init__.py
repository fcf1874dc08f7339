"""The stub's database: models, context-first functions, migrations."""
