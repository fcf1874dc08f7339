"""nova_shim's database: tables (models), functions (api), migrations."""
