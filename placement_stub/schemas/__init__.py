"""JSON Schemas of request bodies, one module per resource."""
