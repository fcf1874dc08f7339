"""Server side of the agent RPC API: the host work of a bind.

The version history is in ``cyborg_lite.agent.rpcapi``. Every write to
the host goes through ``Sysfs`` or a
driver's ``program``, both rooted at configurable paths so tests can run
them against fixture trees. Programmings go through
``DevicePrograms``: one at a time per
device, a caller asking for the bitstream being loaded joins that run.
"""

import logging
import os

import oslo_messaging

from cyborg_lite import profiles
from cyborg_lite.agent import programming
from cyborg_lite.agent import rpcapi
from cyborg_lite.agent.drivers import base

LOG = logging.getLogger(__name__)


def _pci_address(info: dict) -> str:
    return '%s:%s:%s.%s' % (info['domain'], info['bus'], info['device'],
                            info['function'])


class AgentManager:
    target = oslo_messaging.Target(version=rpcapi.RPC_API_VERSION)

    def __init__(self, conf, sysfs, drivers):
        self._conf = conf
        self._sysfs = sysfs
        self._drivers = {d.name: d for d in drivers}
        self._programs = programming.DevicePrograms()

    def create_mdev(self, ctx, handle):
        """Create the handle's mdev; an mdev that exists already (a bind
        repeated after its conductor was lost) is left as it is."""
        info = handle['attach_info']
        address = _pci_address(info)
        if self._sysfs.has_mdev(address, info['asked_type'], handle['uuid']):
            LOG.info('Mdev %s of type %s on %s exists already',
                     handle['uuid'], info['asked_type'], address)
            return
        LOG.info('Creating mdev %s of type %s on %s', handle['uuid'],
                 info['asked_type'], address)
        self._sysfs.create_mdev(address, info['asked_type'], handle['uuid'])

    def remove_mdev(self, ctx, handle):
        info = handle['attach_info']
        removed = self._sysfs.remove_mdev(handle['uuid'],
                                          _pci_address(info),
                                          info.get('asked_type'))
        LOG.info('Removing mdev %s: %s', handle['uuid'],
                 'done' if removed else 'it did not exist')
        return removed

    def program(self, ctx, deployable, bitstream_id):
        if not profiles.BITSTREAM_ID_RE.fullmatch(bitstream_id or ''):
            # Checked when the profile was made; a path out of
            # bitstream_dir is refused here too, whoever asks.
            raise base.ProgramError('%r is not a bitstream name'
                                    % (bitstream_id,))
        driver = self._drivers.get(deployable.get('driver_name'))
        if driver is None:
            raise base.ProgramError('no enabled driver %r can program %s'
                                    % (deployable.get('driver_name'),
                                       deployable.get('name')))
        path = os.path.join(self._conf.agent.bitstream_dir, bitstream_id)
        device = deployable['controlpath_info']

        def run():
            LOG.info('Programming %s with %s', deployable.get('name'), path)
            driver.program(device, path)
        self._programs.program(device, bitstream_id, run)
        return True
