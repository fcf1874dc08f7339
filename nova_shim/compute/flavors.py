"""Flavors: the ones in ``[compute] flavors``, and inline ones.

A flavor is plain data. ``accel:device_profile`` in its ``extra_specs``
names the Cyborg device profile whose accelerators the instance gets.
"""

import dataclasses
import json

from oslo_config import cfg

from nova_shim import exception

DEVICE_PROFILE_SPEC = 'accel:device_profile'


@dataclasses.dataclass
class Flavor:
    name: str
    vcpus: int
    memory_mb: int
    disk_gb: int
    extra_specs: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def device_profile(self) -> str | None:
        return self.extra_specs.get(DEVICE_PROFILE_SPEC) or None

    def to_dict(self) -> dict:
        """Nova's flavor shape (``ram``, ``disk``) as the API shows it."""
        return {'id': self.name, 'name': self.name, 'vcpus': self.vcpus,
                'ram': self.memory_mb, 'disk': self.disk_gb,
                'extra_specs': dict(self.extra_specs)}


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


def from_dict(body: dict) -> Flavor:
    """A flavor from Nova's shape (``ram``, ``disk``) or ours
    (``memory_mb``, ``disk_gb``): ``vcpus`` required, amounts whole
    numbers (or their digits), ``name`` and ``id`` strings, extra specs
    an object of strings."""
    try:
        for key in ('name', 'id'):
            if key in body and not isinstance(body[key], str):
                raise ValueError('"%s" must be a string' % key)
        specs = body.get('extra_specs', {})
        if not isinstance(specs, dict) or not all(
                isinstance(v, str) for v in specs.values()):
            raise ValueError('extra_specs must be an object of strings')
        return Flavor(
            name=body.get('name') or body.get('id') or 'inline',
            vcpus=_amount(body, 'vcpus', required=True),
            memory_mb=_amount(body, 'ram', 'memory_mb'),
            disk_gb=_amount(body, 'disk', 'disk_gb'),
            extra_specs=dict(specs))
    except (TypeError, ValueError) as exc:
        raise exception.InvalidRequest(
            reason='bad flavor %r: %s' % (body, exc)) from exc


def load_flavors(conf: cfg.ConfigOpts) -> dict[str, Flavor]:
    """The configured flavors by name."""
    try:
        items = json.loads(conf.compute.flavors)
    except ValueError as exc:
        raise exception.InvalidRequest(
            reason='[compute] flavors is not JSON: %s' % exc) from exc
    return {flavor.name: flavor for flavor in map(from_dict, items)}


def get_flavor(conf: cfg.ConfigOpts, flavor_ref: str) -> Flavor:
    flavor = load_flavors(conf).get(flavor_ref)
    if flavor is None:
        raise exception.FlavorNotFound(flavor_id=flavor_ref)
    return flavor
