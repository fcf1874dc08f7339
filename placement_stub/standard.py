"""The standard resource classes and traits: those of the
``os-resource-classes`` and ``os-traits`` libraries, as in Placement.

Each start of the app (``[placement] sync_on_startup``) adds the names
the installed libraries have and the database lacks, so a newer library
brings its new names in. Any other name must be ``CUSTOM_*``.
"""

import re

import os_resource_classes
import os_traits

CUSTOM_PREFIX = 'CUSTOM_'
# At most 255 characters, the length of the name columns.
CUSTOM_RE = re.compile(r'^CUSTOM_[A-Z0-9_]{1,248}\Z')

RESOURCE_CLASSES = tuple(os_resource_classes.STANDARDS)
TRAITS = tuple(os_traits.get_traits())
