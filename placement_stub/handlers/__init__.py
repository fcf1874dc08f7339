"""Request handlers: plain functions, one module per resource."""
