"""Servers as Nova's API shows them (``GET /servers/{id}``).

Besides Nova's fields (status, the ``OS-EXT-STS`` states, host and
hypervisor hostname, the embedded flavor of microversion 2.47), a
detailed view has three fields of nova_shim's own: ``accelerator_requests``
(the instance's ARQs as Cyborg returns them), ``hostdevs`` (the host
devices in the guest's domain XML, read back from libvirt) and ``retry``
(the compute nodes its last build tried, as Nova's request spec records
them: ``{"num_attempts": 2, "hosts": [["host-1", "host-1"], ...]}``).
"""

from nova_shim.compute.db import Instance
from nova_shim.compute import states


def _time(value) -> str:
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')


def server_summary(instance: Instance) -> dict:
    return {'id': instance.uuid, 'name': instance.name,
            'links': [{'rel': 'self', 'href': '/servers/' + instance.uuid}]}


def server(instance: Instance, arqs: list[dict] | None = None,
           hostdevs: list[dict] | None = None) -> dict:
    flavor = instance.flavor
    body = {
        'id': instance.uuid,
        'name': instance.name,
        'status': states.api_status(instance.vm_state, instance.task_state),
        'tenant_id': instance.project_id,
        'user_id': instance.user_id,
        'created': _time(instance.created_at),
        'updated': _time(instance.updated_at),
        'flavor': {'original_name': flavor['name'], 'vcpus': flavor['vcpus'],
                   'ram': flavor['memory_mb'], 'disk': flavor['disk_gb'],
                   'extra_specs': dict(flavor.get('extra_specs', {}))},
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
