"""The shapes of the names the agent writes into sysfs: a PCI address,
an mdev type and an mdev uuid. The agent's sysfs reader and its
privileged writer (``cyborg_lite.privsep``) both check them."""

import re

MDEV_TYPES = 'mdev_supported_types'

PCI_ADDRESS_RE = re.compile(
    r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')
MDEV_TYPE_RE = re.compile(r'^[A-Za-z0-9_.-]+$')
UUID_RE = re.compile(
    r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
