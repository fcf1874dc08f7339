"""The edge of nova_shim's compute API: who the caller is.

``auth.py`` composes the configured authentication around the API and
builds each request's context (identity, credentials and the policy
enforcer that the handlers ask, as Nova's ``context.can``).
"""
