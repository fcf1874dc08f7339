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


def from_dict(body: dict) -> Flavor:
    """A flavor from Nova's shape (``ram``, ``disk``) or ours."""
    try:
        specs = body.get('extra_specs') or {}
        if not isinstance(specs, dict):
            raise ValueError('extra_specs must be an object')
        return Flavor(
            name=str(body.get('name') or body.get('id') or 'inline'),
            vcpus=int(body['vcpus']),
            memory_mb=int(body.get('ram', body.get('memory_mb', 0))),
            disk_gb=int(body.get('disk', body.get('disk_gb', 0))),
            extra_specs={str(k): str(v) for k, v in specs.items()})
    except (KeyError, TypeError, ValueError) as exc:
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
