"""The agent's privileged actions, behind oslo.privsep.

The agent runs as an unprivileged user. The two things it does that
need root run in privsep daemons, each allowed only its own functions:

* ``sysfs_admin`` writes the kernel's mdev control attributes
  (``privsep.sysfs``): a uuid into ``mdev_supported_types/<type>/
  create``, ``1`` into ``<mdev>/remove``;
* ``fpga_admin`` runs ``[agent] fpga_program_command`` on a device with
  a bitstream of ``[agent] bitstream_dir`` (``privsep.fpga``).

Both daemons keep uid 0 and drop every capability: the kernel's sysfs
attributes belong to root, so root's owner permission is all a write
needs; a programming tool that the daemon starts gets root's powers
back when it is executed, as vendor tools expect (that is the tool's
own privilege, not the agent's). What runs as root is a few small
functions that check their arguments; the agent's RPC handling, report
parsing and drivers run as its own user. No read of the agent needs
root: every sysfs attribute the drivers read is world-readable.

A daemon is started on the first privileged call by the helper command
of its section (``[privsep_sysfs]``, ``[privsep_fpga]``): by default
``[agent] root_helper`` (``sudo``) followed by this installation's
``privsep-helper`` and the agent's own ``--config-file`` arguments.
The daemon reads those files itself and checks every call against
them, so a compromised agent can neither name another command nor
write outside ``[agent] sysfs_root``; sudoers (or rootwrap) should let
the agent's user run exactly these command lines
(doc/source/admin/agents.rst).

The all-in-one's simulated hosts are trees that its own process owns:
``run_in_process`` runs the privileged functions in the caller's
process (oslo.privsep's client mode off), as the in-process tests do.
"""

import copy
import os
import shlex
import shutil
import sys

from oslo_config import cfg
from oslo_privsep import priv_context

from cyborg_lite.conf import agent as agent_conf

sysfs_admin = priv_context.PrivContext(
    'cyborg_lite', cfg_section='privsep_sysfs',
    pypath=__name__ + '.sysfs_admin', capabilities=[])

fpga_admin = priv_context.PrivContext(
    'cyborg_lite', cfg_section='privsep_fpga',
    pypath=__name__ + '.fpga_admin', capabilities=[])

CONTEXTS = (sysfs_admin, fpga_admin)

_in_process = False


class RefusedAction(ValueError):
    """A privileged function was asked for something it does not do."""


def run_in_process(enabled: bool = True) -> None:
    """Run the privileged functions in this process, without daemons
    (the all-in-one's simulated hosts, the in-process tests); with
    ``enabled`` False, in daemons again."""
    global _in_process
    _in_process = enabled
    for context in CONTEXTS:
        context.set_client_mode(not enabled)


def in_process() -> bool:
    """Whether ``run_in_process`` was called in this process. The
    daemons never call it: there, each call is checked against the
    daemon's own configuration."""
    return _in_process


def daemon_settings():
    """The ``[agent]`` options that a daemon reads from the files on
    its own command line (``privsep-helper --config-file ...``)."""
    cfg.CONF.register_opts(agent_conf.PRIVILEGED_OPTS, group=agent_conf.GROUP)
    return cfg.CONF.agent


def helper_command(conf) -> list[str]:
    """What starts a daemon for the agent configured by ``conf``:
    ``[agent] root_helper``, this installation's ``privsep-helper`` and
    the agent's configuration files (oslo.privsep appends the context
    and the socket)."""
    helper = os.path.join(os.path.dirname(sys.executable), 'privsep-helper')
    if not os.path.exists(helper):
        helper = shutil.which('privsep-helper') or 'privsep-helper'
    command = shlex.split(conf.agent.root_helper) + [helper]
    for path in conf.config_file:
        command += ['--config-file', os.path.abspath(path)]
    for path in conf.config_dir or ():
        command += ['--config-dir', os.path.abspath(path)]
    return command


def configure_daemons(conf) -> None:
    """Let the contexts start their daemons as the agent's ``conf``
    says. oslo.privsep reads its sections from the global ``cfg.CONF``,
    so it is parsed from the agent's files too (for those sections
    only); a section's ``helper_command`` still wins over the default
    that ``helper_command`` builds."""
    args = []
    for path in conf.config_file:
        args += ['--config-file', path]
    for path in conf.config_dir or ():
        args += ['--config-dir', path]
    cfg.CONF(args, project='cyborg-lite', default_config_files=[],
             default_config_dirs=[])
    default = shlex.join(helper_command(conf))
    for context in CONTEXTS:
        cfg.CONF.set_default('helper_command', default,
                             group=context.cfg_section)


def list_opts():
    """The sections of the two daemons, for the sample configuration."""
    return [(context.cfg_section, copy.deepcopy(priv_context.OPTS))
            for context in CONTEXTS]
