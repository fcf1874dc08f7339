"""The bytes of a guest's root disk, for a snapshot image.

``root_disk`` finds the root disk in the domain XML libvirt holds:
the first ``<disk device='disk'>`` of ``type='file'`` whose source names
a file, in the format its ``<driver type=...>`` says (raw when it says
none). ``disk_contents`` yields that file to read:

* a guest that is not running (stopped, paused) does not write to its
  disk: the file is read as it is;
* a running guest is paused while its disk is copied to a file under
  ``workdir`` and resumed at once; the copy is what is read, and is
  removed afterwards. The image is as consistent as the disk of a guest
  that lost power at that instant (its OS is not asked to flush).

The file is read as it is: a qcow2 disk with a backing file is uploaded
without that backing file, and nothing converts formats.

A guest with no disk file (the guests of libvirt's ``test:///default``,
which nova_shim defines without a disk, or a disk that is not a file)
gives an empty raw image: zero bytes.
"""

import contextlib
import dataclasses
import io
import logging
import os
import shutil
import tempfile
from typing import BinaryIO, Iterator
from xml.etree import ElementTree as ET

from nova_shim import exception
from nova_shim.virt.libvirt import LibvirtDriver

try:
    import libvirt
except ImportError:  # optional: root_disk works without it
    libvirt = None

LOG = logging.getLogger(__name__)

# libvirt's driver type -> Glance's disk_format, where they differ.
_DISK_FORMATS = {'vpc': 'vhd'}
_RUNNING = 1  # VIR_DOMAIN_RUNNING
_COPY_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class RootDisk:
    """The file of a guest's root disk (None: it has none) and its
    format as Glance names it."""

    path: str | None
    disk_format: str


def root_disk(domain_xml: str) -> RootDisk:
    """The root disk the domain XML names (see the module's docstring)."""
    for disk in ET.fromstring(domain_xml).iterfind('./devices/disk'):
        if disk.get('device', 'disk') != 'disk' or \
                disk.get('type') != 'file':
            continue
        source = disk.find('source')
        path = source.get('file') if source is not None else None
        if not path:
            continue
        driver = disk.find('driver')
        kind = (driver.get('type') if driver is not None else None) or 'raw'
        return RootDisk(path, _DISK_FORMATS.get(kind, kind))
    return RootDisk(None, 'raw')


def _fail(instance_uuid: str, reason: str) -> exception.HypervisorError:
    return exception.HypervisorError(op='snapshot', instance=instance_uuid,
                                     reason=reason)


def _is_running(domain) -> bool:
    return bool(domain.isActive()) and domain.state()[0] == _RUNNING


@contextlib.contextmanager
def disk_contents(driver: LibvirtDriver, instance_uuid: str, disk: RootDisk,
                  workdir: str) -> Iterator[BinaryIO]:
    """The root disk's bytes, open for reading (see the module's
    docstring); HypervisorError when they cannot be read."""
    if disk.path is None:
        yield io.BytesIO(b'')
        return
    domain = driver.host.get_domain(instance_uuid)
    try:
        running = _is_running(domain)
    except libvirt.libvirtError as exc:
        raise _fail(instance_uuid, exc.get_error_message()) from exc
    if not running:
        try:
            source = open(disk.path, 'rb')
        except OSError as exc:
            raise _fail(instance_uuid, 'cannot read %s: %s'
                        % (disk.path, exc.strerror)) from exc
        with source:
            yield source
        return
    copy = _copy_while_paused(domain, instance_uuid, disk.path, workdir)
    try:
        with open(copy, 'rb') as source:
            yield source
    finally:
        os.unlink(copy)


def _copy_while_paused(domain, instance_uuid: str, path: str,
                       workdir: str) -> str:
    """Copy the disk of a running guest, paused meanwhile; the copy's
    path."""
    os.makedirs(workdir, exist_ok=True)
    fd, copy = tempfile.mkstemp(prefix='snapshot-%s-' % instance_uuid,
                                dir=workdir)
    try:
        with os.fdopen(fd, 'wb') as out, open(path, 'rb') as source:
            domain.suspend()
            try:
                shutil.copyfileobj(source, out, _COPY_CHUNK)
            finally:
                domain.resume()
    except OSError as exc:
        os.unlink(copy)
        raise _fail(instance_uuid, 'cannot copy %s: %s'
                    % (path, exc.strerror or exc)) from exc
    except libvirt.libvirtError as exc:
        os.unlink(copy)
        raise _fail(instance_uuid, exc.get_error_message()) from exc
    LOG.info('instance %s: copied %s while paused', instance_uuid, path)
    return copy
