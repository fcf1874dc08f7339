"""Hypervisor drivers for nova_shim's compute service.

``libvirt`` builds domain XML (with one ``<hostdev>`` per accelerator
request) and runs guests; ``power_state`` holds Nova's power states.
"""
