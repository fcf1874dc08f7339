"""Clients for the image service (Glance)."""
