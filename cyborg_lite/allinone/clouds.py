"""The all-in-one's ``clouds.yaml``: one cloud, ``cyborg-lite``, that
the OpenStack clients (``openstack``, openstacksdk, python-novaclient
through openstacksdk's config) use as they use any cloud::

    OS_CLIENT_CONFIG_FILE=<state dir>/clouds.yaml \\
        openstack --os-cloud cyborg-lite server list

Its services are open (the all-in-one runs them on loopback), so the
cloud authenticates with keystoneauth's ``none`` plugin and names each
service's endpoint, with the API versions to ask for.
"""

import os

import yaml

CLOUD = 'cyborg-lite'
FILE = 'clouds.yaml'
# What each client asks each service for.
API_VERSIONS = {'compute_api_version': '2.96',
                'placement_api_version': '1.39',
                'image_api_version': '2',
                'accelerator_api_version': '2'}


def cloud(api_url: str, compute_url: str | None, placement_url: str | None,
          image_url: str | None, identity_url: str | None = None) -> dict:
    """The ``cyborg-lite`` cloud of the services at these URLs."""
    config = {'auth_type': 'none', 'region_name': 'RegionOne',
              'accelerator_endpoint_override': api_url + '/v2'}
    if identity_url:
        config['identity_endpoint_override'] = identity_url
    if compute_url:
        config['compute_endpoint_override'] = compute_url
    if placement_url:
        config['placement_endpoint_override'] = placement_url
    if image_url:
        config['image_endpoint_override'] = image_url
    config.update(API_VERSIONS)
    return config


def write(state_dir: str, config: dict) -> str:
    """Write ``clouds.yaml`` with the one cloud into ``state_dir``; its
    path."""
    path = os.path.join(state_dir, FILE)
    with open(path, 'w') as f:
        f.write('# Written by cyborg-lite-allinone at each start.\n')
        yaml.safe_dump({'clouds': {CLOUD: config}}, f, sort_keys=False)
    return path


def usage(path: str) -> str:
    """The line that tells how to use the cloud."""
    return ('OS_CLIENT_CONFIG_FILE=%s openstack --os-cloud %s server list'
            % (path, CLOUD))
