"""Clients for the accelerator service (Cyborg)."""
