"""Flavors: the stored ones, their seed, and inline ones.

Flavors live in the database (``nova_shim.db.api``), made through
the API as Nova's are (``POST /flavors``, ``os-extra_specs``).
``[compute] flavors`` seeds them when the compute service starts on a
database that has none. ``accel:device_profile`` in a flavor's extra
specs names the Cyborg device profile whose accelerators its servers
get, as in Nova.

``from_dict`` reads a flavor's amounts the way Nova's schemas take
them, for a seed entry and for the inline ``flavor`` of a server create
(nova_shim's own, beside ``flavorRef``).
"""

import json
import uuid as uuidlib

from oslo_config import cfg

from nova_shim.compute.deps import ComputeDeps
from nova_shim import exception
from nova_shim.objects import Flavor

# The most characters of an extra spec's key or value, as Nova's.
MAX_LENGTH = 255


def _amount(body: dict, *keys: str, required: bool = False) -> int:
    """The first of ``keys`` in ``body`` (each of them there must be an
    integer >= 0, or its digits in a string); 0 when none is there,
    unless ``required``."""
    values = []
    for key in keys:
        if key not in body:
            continue
        value = body[key]
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or \
                value < 0:
            raise ValueError('"%s" must be a whole number' % key)
        values.append(value)
    if not values and required:
        raise ValueError('"%s" is required' % keys[0])
    return values[0] if values else 0


def extra_specs(specs: object) -> dict[str, str]:
    """Extra specs as Nova takes them: an object whose keys are 1 to 255
    characters and whose values are strings, numbers or booleans (kept
    as strings) of at most 255 characters."""
    if not isinstance(specs, dict):
        raise ValueError('extra specs are an object')
    kept = {}
    for key, value in specs.items():
        if not key or len(key) > MAX_LENGTH:
            raise ValueError('an extra spec key has 1 to %d characters'
                             % MAX_LENGTH)
        if isinstance(value, bool) or isinstance(value, (int, float)):
            value = str(value)
        if not isinstance(value, str) or len(value) > MAX_LENGTH:
            raise ValueError('the value of extra spec %r is a string of at '
                             'most %d characters' % (key, MAX_LENGTH))
        kept[key] = value
    return kept


def from_dict(body: dict) -> Flavor:
    """A flavor from Nova's shape (``ram``, ``disk``) or ours
    (``memory_mb``, ``disk_gb``): ``vcpus`` required, amounts whole
    numbers (or their digits), ``name`` and ``id`` strings, extra specs
    an object of strings."""
    try:
        for key in ('name', 'id'):
            if key in body and not isinstance(body[key], str):
                raise ValueError('"%s" must be a string' % key)
        return Flavor(
            name=body.get('name') or body.get('id') or 'inline',
            flavorid=body.get('id'),
            vcpus=_amount(body, 'vcpus', required=True),
            memory_mb=_amount(body, 'ram', 'memory_mb'),
            disk_gb=_amount(body, 'disk', 'disk_gb'),
            extra_specs=extra_specs(body.get('extra_specs', {})))
    except (TypeError, ValueError) as exc:
        raise exception.InvalidRequest(
            reason='bad flavor %r: %s' % (body, exc)) from exc


def seed_id(name: str) -> str:
    """The stable id of a seeded flavor that names none."""
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, 'flavor.' + name))


def configured(conf: cfg.ConfigOpts) -> list[Flavor]:
    """The flavors of ``[compute] flavors``."""
    try:
        items = json.loads(conf.compute.flavors)
    except ValueError as exc:
        raise exception.InvalidRequest(
            reason='[compute] flavors is not JSON: %s' % exc) from exc
    found = []
    for flavor in map(from_dict, items):
        flavor.flavorid = flavor.flavorid or seed_id(flavor.name)
        found.append(flavor)
    return found


def seed(deps: ComputeDeps) -> int:
    """Store the configured flavors in a database that has none yet;
    how many were stored."""
    if deps.db.count_flavors():
        return 0
    flavors = configured(deps.conf)
    for flavor in flavors:
        try:
            deps.db.create_flavor(flavor)
        except exception.FlavorExists:
            pass  # another compute service on the database seeded it
    return len(flavors)
