"""One discovery pass over the enabled drivers, and its JSON rendering.

The agent's periodic report and ``cyborg-lite-agent --discover-only``
both run ``run_drivers`` (``--discover-only`` through
``discover``); the report sends ``device.to_dict()`` for each
device, and ``render_json`` shows the same data for people, with
each deployable's resource class and traits spelled out.

A pass reports what it can: a broken device is left out by its driver
(see ``skipping_broken``),
and a driver that fails as a whole is logged while the other drivers
still report. The daemon passes the devices each driver found last
time (``last_found``): a failed driver's last devices are reported
again, and so is a device its driver lists but cannot read this time:
a bad moment must not delete devices from the inventory and from
Placement. A device that really went away (its driver no longer lists
it) goes at the first pass its driver completes.
"""

from __future__ import annotations

import json
import logging

from cyborg_lite.agent.drivers import base
from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite.agent.sysfs import SysfsError
from cyborg_lite import model

LOG = logging.getLogger(__name__)


def discover(conf, sysfs: Sysfs | None = None,
             hostname: str | None = None) -> list[model.DriverDevice]:
    """The devices that every enabled driver finds, in driver order."""
    sysfs = sysfs or Sysfs.from_conf(conf)
    return run_drivers(base.load_drivers(conf, sysfs, hostname), sysfs)


def run_drivers(drivers: list[base.Driver], sysfs: Sysfs,
                last_found: dict | None = None) -> list[model.DriverDevice]:
    """One pass of ``drivers`` over ``sysfs``, in driver order.

    A driver that fails is logged; its devices of ``last_found`` (driver
    name -> devices, updated here after each driver that completes) are
    reported in its place, or none without them.
    """
    devices: list[model.DriverDevice] = []
    with sysfs.discovery_pass():
        for driver in drivers:
            before = (last_found or {}).get(driver.name, [])
            result = _run_one(driver)
            if result is None:
                found = before
                if found:
                    LOG.warning('Driver %s failed: reporting the %d devices '
                                'it found last time', driver.name,
                                len(found))
            else:
                found = result[0] + _unread(driver, before, result[1])
                if last_found is not None:
                    last_found[driver.name] = found
            devices.extend(found)
    return devices


def _unread(driver, before, skipped) -> list[model.DriverDevice]:
    """The devices of ``before`` at the ``skipped`` addresses: a device
    that is there but could not be read this time is reported as it was
    read last time, not as gone (a device that went away is not listed
    by its driver at all, and goes)."""
    wanted = {model.canonical_json(model.pci_address_info(address))
              for address in skipped}
    kept = [dev for dev in before if dev.controlpath_info in wanted]
    if kept:
        LOG.warning('Driver %s could not read %d device(s): reporting them '
                    'as it found them last time', driver.name, len(kept))
    return kept


def _run_one(driver: base.Driver
             ) -> tuple[list[model.DriverDevice], set[str]] | None:
    """The devices ``driver`` finds and the addresses it could not read,
    or None when it fails as a whole."""
    try:
        found = driver.discover_pass()
    except SysfsError as exc:
        LOG.error('Driver %s found no devices: %s', driver.name, exc)
        return None
    except Exception as exc:
        LOG.exception('Driver %s failed: %s', driver.name, exc)
        return None
    LOG.debug('driver %s found %d devices', driver.name, len(found[0]))
    return found


def to_report(hostname: str, devices: list[model.DriverDevice]) -> dict:
    """The JSON-able view: ``to_dict()`` plus ``resource_class`` and
    ``traits`` on each deployable."""
    rendered = []
    for device, data in ((d, d.to_dict()) for d in devices):
        for deployable, dep_data in zip(device.deployables,
                                        data['deployables'], strict=True):
            dep_data['resource_class'] = deployable.resource_class
            dep_data['traits'] = deployable.traits
        rendered.append(data)
    return {'hostname': hostname,
            'digest': model.report_digest(devices),
            'devices': rendered}


def render_json(hostname: str, devices: list[model.DriverDevice]) -> str:
    return json.dumps(to_report(hostname, devices), indent=2,
                      sort_keys=True)
