"""The driver interface, the driver loader and what drivers share.

A driver turns what a ``Sysfs`` shows into
``DriverDevice`` lists. Drivers are found through
the stevedore namespace ``cyborg_lite.accelerator.driver`` and enabled by
``[agent] enabled_drivers``; ``BUILTIN_DRIVERS`` names the same
classes for a source tree whose entry points are not installed.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import json
import logging
import re
import shlex
import socket
from typing import ClassVar

import stevedore

from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite import model
from cyborg_lite import privsep
from cyborg_lite.privsep import fpga as privsep_fpga

LOG = logging.getLogger(__name__)

NAMESPACE = 'cyborg_lite.accelerator.driver'
# Placement's trait and resource class names: [A-Z0-9_], 255 at most.
TRAIT_RE = re.compile(r'^[A-Z0-9_]{1,255}$')
# What reading one device may raise when the device, not the driver, is
# at fault: see Driver.skipping_broken.
DEVICE_ERRORS = (SysfsError, OSError, ValueError)

BUILTIN_DRIVERS = {
    'fake': 'cyborg_lite.agent.drivers.fake:FakeDriver',
    'nvidia_gpu': 'cyborg_lite.agent.drivers.nvidia_gpu:NvidiaGPUDriver',
    'intel_fpga': 'cyborg_lite.agent.drivers.intel_fpga:IntelFPGADriver',
    'xilinx_fpga': 'cyborg_lite.agent.drivers.xilinx_fpga:XilinxFPGADriver',
}


class DriverError(Exception):
    """Base of the errors a driver raises."""


class UnknownDriverError(DriverError):
    """``[agent] enabled_drivers`` names a driver that does not exist."""


class ProgramError(DriverError):
    """Programming an FPGA failed."""


def host_name(conf) -> str:
    """The host part of deployable names.

    ``[agent] resource_provider_name`` (the compute-node provider's name
    in Placement), else ``[DEFAULT] host``, else the host name as Nova's
    ``[DEFAULT] host`` defaults to it (``socket.gethostname()``): the
    name Nova binds ARQs with. Read when called, never at import.
    """
    return (conf.agent.resource_provider_name or conf.host
            or socket.gethostname())


def pci_address(controlpath_info: str) -> str:
    """``dddd:bb:dd.f`` back from a PCI controlpath or attach info."""
    info = json.loads(controlpath_info)
    return '%s:%s:%s.%s' % (info['domain'], info['bus'], info['device'],
                            info['function'])


def pci_handle(address: str) -> model.DriverAttachHandle:
    return model.DriverAttachHandle(
        attach_type=model.AttachType.PCI.value,
        attach_info=model.canonical_json(model.pci_address_info(address)))


def attributes(rc: str, traits: list[str]) -> tuple[model.DriverAttribute,
                                                    ...]:
    """``rc`` plus ``trait0..N`` in the order given, duplicates dropped;
    ValueError for a name that Placement would refuse."""
    unique = list(dict.fromkeys(traits))
    for name in [rc] + unique:
        if not TRAIT_RE.match(name):
            raise ValueError('%r is not a trait or resource class name'
                             % name[:80])
    return ((model.DriverAttribute('rc', rc),)
            + tuple(model.DriverAttribute('trait%d' % n, t)
                    for n, t in enumerate(unique)))


def trait_part(text: str) -> str:
    """Upper-case ``text`` with anything outside [A-Z0-9_] made ``_``."""
    return ''.join(c if c.isalnum() and c.isascii() else '_'
                   for c in text.upper()).strip('_')


class Driver(abc.ABC):
    """One kind of accelerator on this host."""

    name: ClassVar[str]

    def __init__(self, conf, sysfs: Sysfs,
                 hostname: str | None = None) -> None:
        self.conf = conf
        self.sysfs = sysfs
        self.hostname = hostname or host_name(conf)
        # PCI addresses of the devices the current pass could not read.
        self._skipped: set[str] = set()

    def deployable_name(self, address: str) -> str:
        return '%s_%s' % (self.hostname, address)

    @contextlib.contextmanager
    def skipping_broken(self, address: str):
        """Around the reading of one device: a device that cannot be read
        (unplugged meanwhile, a file missing or of the wrong shape, a
        link out of the sysfs root) is left out with one warning that
        names it and why, and the scan goes on with the next."""
        try:
            yield
        except DEVICE_ERRORS as exc:
            LOG.warning('Driver %s skips device %s: %s', self.name, address,
                        exc)
            self._skipped.add(address)

    @abc.abstractmethod
    def discover(self) -> list[model.DriverDevice]:
        """The devices this driver finds, read fresh on every call."""

    def discover_pass(self) -> tuple[list[model.DriverDevice], set[str]]:
        """``discover``, and the PCI addresses that this pass could
        not read: devices it skipped (``skipping_broken``) and PCI
        functions the bus lists but whose files are broken."""
        self._skipped = set()
        found = self.discover()
        return found, self._skipped | self.sysfs.unreadable_addresses()

    def program(self, controlpath_info: str, bitstream_path: str) -> None:
        """Load a bitstream into the device; raise ProgramError on failure."""
        raise ProgramError('driver %s cannot program devices' % self.name)

    def require_pci_device(self, controlpath_info: str) -> str:
        """The PCI address of ``controlpath_info``, if it is on this host."""
        address = pci_address(controlpath_info)
        if not self.sysfs.has_pci_device(address):
            raise ProgramError('no PCI device %s on this host' % address)
        return address


def run_program_command(conf, address: str, bitstream_path: str) -> None:
    """Run ``[agent] fpga_program_command <pci address> <bitstream>``,
    as root through ``cyborg_lite.privsep.fpga``."""
    command = conf.agent.fpga_program_command
    if not command:
        raise ProgramError('[agent] fpga_program_command is not set')
    timeout = conf.agent.fpga_program_timeout
    LOG.info('programming %s with %s', address, bitstream_path)
    try:
        returncode, stderr = privsep_fpga.run_program_command(
            command, address, bitstream_path, timeout)
    except OSError as exc:
        raise ProgramError('cannot run %s: %s' % (
            shlex.split(command)[0], exc.strerror or exc)) from exc
    except privsep.RefusedAction as exc:
        raise ProgramError(str(exc)) from exc
    if returncode is None:
        raise ProgramError('programming %s timed out after %s s'
                           % (address, timeout))
    if returncode != 0:
        raise ProgramError('programming %s failed with exit code %d: %s'
                           % (address, returncode, stderr.strip()[-500:]))
    LOG.info('programmed %s with %s', address, bitstream_path)


def _import_class(spec: str) -> type[Driver]:
    module, _, attr = spec.partition(':')
    return getattr(importlib.import_module(module), attr)


def driver_classes(names: list[str]) -> list[type[Driver]]:
    """The driver classes for ``names``, in that order."""
    manager = stevedore.NamedExtensionManager(
        NAMESPACE, names=names, invoke_on_load=False, name_order=True)
    installed = {ext.name: ext.plugin for ext in manager}
    classes = []
    for name in names:
        if name in installed:
            classes.append(installed[name])
        elif name in BUILTIN_DRIVERS:
            classes.append(_import_class(BUILTIN_DRIVERS[name]))
        else:
            known = sorted(set(installed) | set(BUILTIN_DRIVERS))
            raise UnknownDriverError(
                'unknown driver %r in [agent] enabled_drivers; known: %s'
                % (name, ', '.join(known)))
    return classes


def load_drivers(conf, sysfs: Sysfs | None = None,
                 hostname: str | None = None) -> list[Driver]:
    """Instantiate the drivers of ``[agent] enabled_drivers``."""
    sysfs = sysfs or Sysfs.from_conf(conf)
    return [cls(conf, sysfs, hostname)
            for cls in driver_classes(conf.agent.enabled_drivers)]
