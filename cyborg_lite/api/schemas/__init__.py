"""JSON Schemas of request bodies, one module per resource, named by
method and microversion."""
