"""nova_shim: the Nova side of cyborg-lite.

The pieces of Nova that accelerators need: a Cyborg client
(``accelerator.cyborg``), scheduling against Placement (``scheduler``),
libvirt guests with one ``<hostdev>`` per accelerator request
(``virt.libvirt``), and a compute service with a small API in the shape
of Nova's (``compute``), run by ``nova-shim-compute`` and driven by the
``nova-shim`` CLI (``cmd``).
"""
