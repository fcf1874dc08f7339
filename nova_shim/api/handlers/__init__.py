"""One module per resource of the compute API: the handlers."""
