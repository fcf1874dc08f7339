"""How resources look on the wire: links and version-gated fields.

The conductor returns plain dicts; these functions add the ``links`` that
upstream serves (``<base>/accelerator/v2/<collection>/<uuid>``) and drop
fields the requested microversion does not show.
"""

from cyborg_lite.api import microversion


def base_url(request, conf) -> str:
    return (conf.api.public_endpoint or request.host_url).rstrip('/')


def _self_link(base, collection, uuid, bookmark=False):
    links = [{'href': '%s/accelerator/v2/%s/%s' % (base, collection, uuid),
              'rel': 'self'}]
    if bookmark:
        links.append({'href': '%s/accelerator/%s/%s' % (base, collection,
                                                       uuid),
                      'rel': 'bookmark'})
    return links


def arq(base, item):
    return dict(item, links=_self_link(base, 'accelerator_requests',
                                       item['uuid']))


def device_profile(base, item):
    return dict(item, links=_self_link(base, 'device_profiles',
                                       item['uuid']))


def deployable(base, item):
    return dict(item, links=_self_link(base, 'deployables', item['uuid'],
                                       bookmark=True))


def device(base, item, version):
    shown = dict(item, links=_self_link(base, 'devices', item['uuid']))
    if not microversion.allow_device_status(version):
        shown.pop('status', None)
    return shown


def attribute(base, item):
    return dict(item, links=_self_link(base, 'attributes', item['uuid']))


def version_document(base, with_root=True):
    version = {'id': 'v2', 'status': 'CURRENT',
               'min_version': str(microversion.MIN_VERSION),
               'max_version': str(microversion.MAX_VERSION),
               'links': [{'href': base + '/accelerator/v2', 'rel': 'self'}]}
    if not with_root:
        return dict(version, id='v2.0',
                    links=[{'href': base + '/accelerator/v2/',
                            'rel': 'self'}])
    return {'name': 'OpenStack Cyborg API',
            'description': 'Cyborg is the OpenStack project for lifecycle '
                           'management of hardware accelerators, such as '
                           'GPUs,FPGAs, AI chips, security accelerators, '
                           'etc.',
            'versions': [version], 'default_version': version}
