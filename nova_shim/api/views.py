"""Servers and flavors as Nova's API shows them.

Besides Nova's fields (status, the ``OS-EXT-STS`` states, host and
hypervisor hostname, the embedded flavor of microversion 2.47), a
detailed view has three fields of nova_shim's own: ``accelerator_requests``
(the instance's ARQs as Cyborg returns them), ``hostdevs`` (the host
devices in the guest's domain XML, read back from libvirt) and ``retry``
(the compute nodes its last build tried, as Nova's request spec records
them: ``{"num_attempts": 2, "hosts": [["host-1", "host-1"], ...]}``).
"""

from nova_shim.compute import states
from nova_shim.objects import Flavor
from nova_shim.objects import Instance

# From 2.47 a server shows what it has of its flavor, not its id.
SERVER_FLAVOR_EMBEDDED = (2, 47)
# Microversions that change a flavor's view: its description (2.55),
# its extra specs (2.61), swap 0 as 0 rather than "" (2.75).
FLAVOR_DESCRIPTION = (2, 55)
FLAVOR_EXTRA_SPECS = (2, 61)
FLAVOR_SWAP_INTEGER = (2, 75)


def _time(value) -> str:
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')


def server_summary(instance: Instance) -> dict:
    return {'id': instance.uuid, 'name': instance.name,
            'links': [{'rel': 'self', 'href': '/servers/' + instance.uuid}]}


def _server_flavor(instance: Instance, base_url: str,
                   version: tuple[int, int]) -> dict:
    """The flavor the server was built with: its id and links before
    2.47, what it had of the flavor from then on (the flavor may have
    been deleted since)."""
    flavor = instance.flavor
    if version < SERVER_FLAVOR_EMBEDDED:
        ref = flavor.get('id') or flavor['name']
        return {'id': ref, 'links': [{
            'rel': 'bookmark', 'href': '%s/flavors/%s' % (base_url, ref)}]}
    return {'original_name': flavor['name'], 'vcpus': flavor['vcpus'],
            'ram': flavor['memory_mb'], 'disk': flavor['disk_gb'],
            'ephemeral': flavor.get('ephemeral_gb', 0),
            'swap': flavor.get('swap', 0),
            'extra_specs': dict(flavor.get('extra_specs', {}))}


def server(instance: Instance, arqs: list[dict] | None = None,
           hostdevs: list[dict] | None = None, base_url: str = '',
           version: tuple[int, int] = (2, 1)) -> dict:
    body = {
        'id': instance.uuid,
        'name': instance.name,
        'status': states.api_status(instance.vm_state, instance.task_state),
        'tenant_id': instance.project_id,
        'user_id': instance.user_id,
        'created': _time(instance.created_at),
        'updated': _time(instance.updated_at),
        'flavor': _server_flavor(instance, base_url, version),
        # As Nova: the image's id and link, or "" (booted from a volume,
        # or no image asked for).
        'image': {'id': instance.image_ref, 'links': [{
            'rel': 'bookmark', 'href': '%s/images/%s' % (
                base_url, instance.image_ref)}]} if instance.image_ref
        else '',
        'OS-EXT-STS:vm_state': instance.vm_state,
        'OS-EXT-STS:task_state': instance.task_state,
        'OS-EXT-STS:power_state': instance.power_state,
        'OS-EXT-SRV-ATTR:host': instance.host,
        'OS-EXT-SRV-ATTR:hypervisor_hostname': instance.node,
        'OS-EXT-SRV-ATTR:reservation_id': instance.reservation_id,
        'retry': instance.retry,
    }
    if instance.fault and instance.vm_state == states.ERROR:
        body['fault'] = {'code': 500, 'message': instance.fault}
    if arqs is not None:
        body['accelerator_requests'] = arqs
    if hostdevs is not None:
        body['hostdevs'] = hostdevs
    return body


def _flavor_links(flavor: Flavor, base_url: str) -> list[dict]:
    return [{'rel': 'self',
             'href': '%s/v2.1/flavors/%s' % (base_url, flavor.flavorid)},
            {'rel': 'bookmark',
             'href': '%s/flavors/%s' % (base_url, flavor.flavorid)}]


def flavor_summary(flavor: Flavor, base_url: str,
                   version: tuple[int, int]) -> dict:
    """A flavor in ``GET /flavors``."""
    view = {'id': flavor.flavorid, 'name': flavor.name,
            'links': _flavor_links(flavor, base_url)}
    if version >= FLAVOR_DESCRIPTION:
        view['description'] = flavor.description
    return view


def flavor(flavor: Flavor, base_url: str, version: tuple[int, int],
           extra_specs: bool = False) -> dict:
    """A flavor in detail; its extra specs from 2.61 when the policy
    lets the caller read them (``extra_specs``)."""
    view = flavor_summary(flavor, base_url, version)
    view.update({
        'ram': flavor.memory_mb, 'disk': flavor.disk_gb,
        'vcpus': flavor.vcpus,
        'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
        'OS-FLV-DISABLED:disabled': flavor.disabled,
        'swap': flavor.swap if flavor.swap or
        version >= FLAVOR_SWAP_INTEGER else '',
        'rxtx_factor': flavor.rxtx_factor,
        'os-flavor-access:is_public': flavor.is_public})
    if version >= FLAVOR_EXTRA_SPECS and extra_specs:
        view['extra_specs'] = dict(flavor.extra_specs)
    return view
