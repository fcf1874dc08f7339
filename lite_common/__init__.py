"""What cyborg-lite's three services share.

cyborg-lite's API (``cyborg_lite``), the placement stub
(``placement_stub``) and nova_shim's compute API (``nova_shim``) are
peers: none imports another, and each imports this package for what
they have in common: the built-in HTTP server, the checks of the text a
request carries, authentication (Keystone, HTTP basic and the open
mode, with the refusal to start when a mode lacks what it needs), and
the database helpers. This package imports none of the three.
"""
