"""A Placement-API-compatible service: the subset Nova and Cyborg use."""
