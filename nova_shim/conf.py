"""nova_shim's configuration options.

Config is passed, not global: ``build_conf`` returns a fresh
``cfg.ConfigOpts``, so nova_shim can run in one process beside the other
services. The option names follow Nova's.

* ``[cyborg]`` and ``[placement]``: keystoneauth1 session, auth and
  adapter options. With ``auth_type`` unset, nova_shim calls Cyborg with
  the user's token (as Nova does); ``auth_type = none`` (with
  ``endpoint_override``) calls a noauth cyborg-lite API with identity
  headers; ``password`` or ``http_basic`` use the credentials given here.
* ``[glance]``: the same options for the Image API (service type
  ``image``), which ``createImage`` and ``createBackup`` need; unset
  (no ``endpoint_override`` and no catalog with an image endpoint),
  those actions answer 400.
* ``[service_user]``: the service token sent with user requests.
* ``[api]``: how the compute API authenticates its callers
  (``auth_strategy``: ``keystone`` with ``[keystone_authtoken]``, as
  Nova; ``http_basic``; or ``noauth2``, open); ``[oslo_policy]``: its
  policy file (Nova's rule names and defaults).
* ``[libvirt]``: the hypervisor connection.
* ``[compute]``: the hypervisor hosts this compute service serves, their
  inventory, the flavors it knows and its HTTP API; ``[database]``: its
  own instance database.
"""

import copy
import json

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_policy import opts as policy_opts

from lite_common import auth as common_auth
from lite_common import logs

CYBORG_GROUP = 'cyborg'
PLACEMENT_GROUP = 'placement'
GLANCE_GROUP = 'glance'
SERVICE_USER_GROUP = 'service_user'
LIBVIRT_GROUP = 'libvirt'
COMPUTE_GROUP = 'compute'
DATABASE_GROUP = 'database'
FILTER_SCHEDULER_GROUP = 'filter_scheduler'
SCHEDULER_GROUP = 'scheduler'
API_GROUP = 'api'
# Looked up in the configuration directories; the rules' defaults apply
# where there is none.
DEFAULT_POLICY_FILE = 'policy.yaml'

API_OPTS = common_auth.strategy_opts(
    'noauth2', 'identity from X-Project-Id, X-User-Id and X-Roles headers, '
    'or a "user:project" token', '/etc/nova-shim/htpasswd',
    ['member', 'reader'], 'the compute API')

SCHEDULER_OPTS = [
    cfg.IntOpt('max_attempts', default=3, min=1,
               help='As Nova\'s: how many compute nodes a build (or an '
                    'unshelve or evacuation) may try. The scheduler '
                    'returns the chosen node and up to this many minus '
                    'one alternates; when binding the accelerators or '
                    'spawning the guest fails on a node, the attempt is '
                    'undone and the next alternate is claimed.'),
]

FILTER_SCHEDULER_OPTS = [
    cfg.IntOpt('host_subset_size', default=1, min=1,
               help='As Nova\'s: the scheduler picks at random among the '
                    'first this many compute nodes that Placement offers '
                    '(1: always the first), so that boots that fail on '
                    'one node do not all land there.'),
]

DEFAULT_FLAVORS = [
    {'name': 'm1.tiny', 'vcpus': 1, 'ram': 512, 'disk': 1,
     'extra_specs': {}},
    {'name': 'm1.small', 'vcpus': 1, 'ram': 2048, 'disk': 20,
     'extra_specs': {}},
]

DEFAULT_OPTS = [
    cfg.IntOpt('arq_binding_timeout', default=300, min=1,
               help='Seconds to wait for Cyborg to bind the accelerator '
                    'requests of an instance being built.'),
    cfg.StrOpt('state_path', default='/var/lib/nova-shim',
               help='Where the compute service keeps its SQLite '
                    'database when [database] connection is unset.'),
    cfg.StrOpt('host', sample_default='<hostname>',
               help='Name of this compute service. Default: the FQDN.'),
    cfg.BoolOpt('allow_resize_to_same_host', default=False,
                help='Let a resize stay on the node the instance is on '
                     '(as Nova: useful on a single node). A cold '
                     'migration always moves to another node.'),
]

COMPUTE_OPTS = [
    cfg.ListOpt('hypervisor_hostnames', default=[],
                help='Hypervisor hostnames (compute nodes) this service '
                     'serves; each is a compute-node resource provider in '
                     'Placement under which Cyborg puts that host\'s '
                     'deployables. Default: [DEFAULT] host.'),
    cfg.IntOpt('vcpus', default=16, min=1,
               help='VCPU inventory of each compute node.'),
    cfg.IntOpt('memory_mb', default=65536, min=1,
               help='MEMORY_MB inventory of each compute node.'),
    cfg.IntOpt('disk_gb', default=1000, min=1,
               help='DISK_GB inventory of each compute node.'),
    cfg.StrOpt('flavors', default=json.dumps(DEFAULT_FLAVORS),
               help='JSON list of flavors, each {"name", "vcpus", "ram" '
                    '(MiB), "disk" (GiB), "extra_specs"}. Put '
                    '"accel:device_profile": "<name>" in extra_specs for '
                    'accelerators.'),
    cfg.IntOpt('shelved_offload_time', default=0, min=-1,
               help='0: shelve offloads at once (Nova\'s default): the '
                    'guest is destroyed, its accelerator requests deleted '
                    'and its allocation freed. Any other value keeps a '
                    'shelved instance on its host, powered off, until '
                    'shelveOffload.'),
    cfg.HostAddressOpt('api_host', default='127.0.0.1',
                       help='Address the compute API listens on.'),
    cfg.PortOpt('api_port', default=8774,
                help='Port of the compute API; 0 picks a free one.'),
]

DATABASE_OPTS = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the instance database (SQLite, '
                    'PostgreSQL or MySQL). Default: a SQLite file under '
                    'state_path.'),
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Run the database migrations when the compute '
                     'service starts. Off by default, as several '
                     'services may share a database: run nova-shim-manage '
                     'db sync first (the all-in-one turns it on for its '
                     'own database).'),
]

SERVICE_USER_OPTS = [
    cfg.BoolOpt('send_service_user_token', default=False,
                help='Send a service token with requests made on behalf '
                     'of a user. Cyborg requires it to bind, unbind and '
                     'delete the accelerator requests of an instance.'),
]

LIBVIRT_OPTS = [
    cfg.StrOpt('connection_uri', default='test:///default',
               help='libvirt connection URI: test:///default (in-memory '
                    'test driver) or qemu:///system on a real host.'),
    cfg.StrOpt('virt_type', choices=['kvm', 'qemu', 'test'],
               help='Domain type. Unset: "test" for test:// URIs, '
                    'otherwise "kvm".'),
]

# Groups whose clients are keystoneauth1 adapters, with the default
# service type of each.
_KSA_GROUPS = {CYBORG_GROUP: 'accelerator', PLACEMENT_GROUP: 'placement',
               GLANCE_GROUP: 'image'}


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every option nova_shim reads on ``conf``."""
    conf.register_opts(DEFAULT_OPTS)
    logs.register_options(conf)
    conf.register_opts(API_OPTS, group=API_GROUP)
    policy_opts.set_defaults(conf, policy_file=DEFAULT_POLICY_FILE)
    conf.register_opts(LIBVIRT_OPTS, group=LIBVIRT_GROUP)
    conf.register_opts(COMPUTE_OPTS, group=COMPUTE_GROUP)
    conf.register_opts(DATABASE_OPTS, group=DATABASE_GROUP)
    conf.register_opts(FILTER_SCHEDULER_OPTS, group=FILTER_SCHEDULER_GROUP)
    conf.register_opts(SCHEDULER_OPTS, group=SCHEDULER_GROUP)
    for group, service_type in _KSA_GROUPS.items():
        ks_loading.register_session_conf_options(conf, group)
        ks_loading.register_auth_conf_options(conf, group)
        ks_loading.register_adapter_conf_options(conf, group)
        conf.set_default('service_type', service_type, group=group)
        conf.set_default('valid_interfaces', ['internal', 'public'],
                         group=group)
    conf.register_opts(SERVICE_USER_OPTS, group=SERVICE_USER_GROUP)
    ks_loading.register_session_conf_options(conf, SERVICE_USER_GROUP)
    ks_loading.register_auth_conf_options(conf, SERVICE_USER_GROUP)


def build_conf(args: list[str] | None = None,
               default_config_files: list[str] | None = None,
               overrides: dict | None = None) -> cfg.ConfigOpts:
    """A fresh, parsed ConfigOpts with every nova_shim option.

    ``overrides`` maps ``(group, name)`` (group None for DEFAULT) to
    values; the all-in-one and the tests set options this way.
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(args or [], project='nova-shim',
         default_config_files=default_config_files or [])
    for (group, name), value in (overrides or {}).items():
        conf.set_override(name, value, group=group)
    return conf


def _ksa_opts(adapter: bool = True) -> list[cfg.Opt]:
    opts = copy.deepcopy(ks_loading.get_session_conf_options())
    opts += copy.deepcopy(ks_loading.get_auth_common_conf_options())
    opts += copy.deepcopy(ks_loading.get_auth_plugin_conf_options('password'))
    if adapter:
        opts += copy.deepcopy(ks_loading.get_adapter_conf_options(
            include_deprecated=False))
    return opts


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Options for oslo-config-generator (entry point ``nova_shim``)."""
    return [
        ('DEFAULT', DEFAULT_OPTS),
        (API_GROUP, API_OPTS),
        (CYBORG_GROUP, _ksa_opts()),
        (PLACEMENT_GROUP, _ksa_opts()),
        (GLANCE_GROUP, _ksa_opts()),
        (SERVICE_USER_GROUP, SERVICE_USER_OPTS + _ksa_opts(adapter=False)),
        (LIBVIRT_GROUP, LIBVIRT_OPTS),
        (COMPUTE_GROUP, COMPUTE_OPTS),
        (DATABASE_GROUP, DATABASE_OPTS),
        (FILTER_SCHEDULER_GROUP, FILTER_SCHEDULER_OPTS),
        (SCHEDULER_GROUP, SCHEDULER_OPTS),
    ]
