"""Options of the [agent] and [gpu_devices] groups."""

from oslo_config import cfg

GROUP = 'agent'
GPU_GROUP = 'gpu_devices'

# What the privileged daemons (``cyborg_lite.privsep``) read from the
# agent's configuration files themselves, to check each call against.
PRIVILEGED_OPTS = [
    cfg.StrOpt('sysfs_root', default='/sys',
               help='Root of the sysfs tree the drivers read and write.'),
    cfg.StrOpt('fpga_program_command',
               help='Command that programs an FPGA. It gets the PCI '
                    'address and the bitstream as arguments.'),
    cfg.StrOpt('bitstream_dir', default='/var/lib/cyborg-lite/bitstreams',
               help='Where FPGA bitstreams are found, each in a file named '
                    'by its bitstream id.'),
    cfg.IntOpt('fpga_program_timeout', default=600, min=1,
               help='Seconds after which fpga_program_command is killed '
                    'and the programming counts as failed.'),
]

OPTS = PRIVILEGED_OPTS + [
    cfg.StrOpt('topic', default='cyborg-lite-agent',
               help='RPC topic of the agents; each listens with '
                    'server=<host>.'),
    cfg.ListOpt('enabled_drivers',
                default=['nvidia_gpu', 'intel_fpga', 'xilinx_fpga'],
                help='Drivers (entry points in cyborg_lite.accelerator.'
                     'driver) that discover devices on this host. The '
                     'default is every driver of real hardware; ``fake`` '
                     '(a made-up FPGA and GPU) is for tests and the '
                     'all-in-one.'),
    cfg.IntOpt('report_interval', default=60, min=1,
               help='Seconds between device reports to the conductor.'),
    cfg.StrOpt('resource_provider_name', sample_default='<hostname>',
               help='Name of the compute-node resource provider in '
                    'Placement under which this host\'s deployables are '
                    'created, and the host name they are reported under. '
                    'Defaults to [DEFAULT] host, else the host name '
                    '(socket.gethostname()), as Nova\'s [DEFAULT] host '
                    'does: it must be the name Nova binds ARQs with.'),
    cfg.IntOpt('resource_provider_startup_retries', default=3, min=0,
               help='How often the agent looks for its compute-node '
                    'resource provider in Placement again, with '
                    'exponential back-off, before it refuses to start.'),
    cfg.FloatOpt('resource_provider_startup_delay', default=1.0, min=0,
                 help='Seconds before the first look again; each retry '
                      'doubles it.'),
    cfg.FloatOpt('report_jitter', default=0.1, min=0, max=1,
                 help='Fraction of report_interval added at random to '
                      'each wait, so that a fleet does not report in '
                      'step.'),
    cfg.IntOpt('fake_fpga_handles', default=16, min=0,
               help='Attach handles of the fake driver\'s FPGA.'),
    cfg.StrOpt('root_helper', default='sudo',
               help='Command that runs the privsep helper as root for '
                    'the agent\'s privileged actions (mdev creation and '
                    'removal, FPGA programming), as Nova\'s root helper: '
                    'the agent itself runs as an unprivileged user. '
                    'Empty when the agent runs as root. A '
                    '[privsep_sysfs] or [privsep_fpga] helper_command '
                    'replaces the whole command line.'),
    cfg.StrOpt('fake_devices',
               help='JSON list of the fake driver\'s devices, each an '
                    'object with "type" (FPGA or GPU), "address" (PCI '
                    'address of the device) and optionally "handles", '
                    '"vendor", "model", "rc" and "traits". Unset: one '
                    'FPGA at 0000:0c:00.0 and one GPU at 0000:0d:00.0.'),
]

GPU_OPTS = [
    cfg.ListOpt('enabled_vgpu_types', default=[],
                help='vGPU types (mdev_supported_types names) to offer. '
                     'A [vgpu_<type>] group lists device_addresses for '
                     'each.'),
    cfg.BoolOpt('filter_sriov_vfs', default=False,
                help='Skip SR-IOV virtual functions of NVIDIA GPUs.'),
]


VGPU_GROUP_PREFIX = 'vgpu_'

VGPU_OPTS = [
    cfg.ListOpt('device_addresses', default=[],
                help='PCI addresses of the GPUs that offer this vGPU '
                     'type. Empty: every GPU that offers the type and is '
                     'not listed under another type.'),
]


def register_vgpu_opts(conf, vgpu_types) -> None:
    """Register a [vgpu_<type>] group for each enabled vGPU type.

    The group names depend on [gpu_devices] enabled_vgpu_types, so they
    are registered once that option is known, as Nova does.
    """
    for vgpu_type in vgpu_types:
        conf.register_opts(VGPU_OPTS, group=VGPU_GROUP_PREFIX + vgpu_type)


def register_opts(conf):
    conf.register_opts(OPTS, group=GROUP)
    conf.register_opts(GPU_OPTS, group=GPU_GROUP)


def list_opts():
    return {GROUP: OPTS, GPU_GROUP: GPU_OPTS}
