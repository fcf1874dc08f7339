"""The privileged sysfs write: an mdev's creation or removal.

``write_control_attribute`` takes the real path of a control attribute
(the agent's ``Sysfs`` resolved it inside its root) and the value, and
writes only what the kernel's mdev interface takes:

* a lower-case uuid into ``.../mdev_supported_types/<type>/create``;
* ``1`` into ``.../<mdev uuid>/remove``.

The path is walked from ``/`` one directory at a time without following
any link, so nothing swapped in after the agent resolved it can take
the write elsewhere; the file must exist (nothing is created) and be a
regular file. In a daemon the path must also lie under the daemon's own
``[agent] sysfs_root``. Anything else raises ``RefusedAction``; a
write the kernel refuses raises its ``OSError``.
"""

import os
import stat

from cyborg_lite.agent import names
from cyborg_lite import privsep


def _refuse(path, why):
    raise privsep.RefusedAction('refused to write to %s: %s' % (path, why))


def check_control_attribute(path: str, value: str, root: str | None) -> None:
    """``RefusedAction`` unless ``value`` may be written to ``path``
    (under ``root`` when one is given)."""
    if not os.path.isabs(path) or os.path.normpath(path) != path:
        _refuse(path, 'not a normalised absolute path')
    if root is not None:
        real_root = os.path.join(os.path.realpath(root), '')
        if not path.startswith(real_root):
            _refuse(path, 'outside [agent] sysfs_root %s' % root)
    parts = path.split('/')
    if len(parts) >= 4 and parts[-1] == 'create' and \
            parts[-3] == names.MDEV_TYPES and \
            names.MDEV_TYPE_RE.match(parts[-2]):
        if not names.UUID_RE.match(value):
            _refuse(path, '%r is not an mdev uuid' % (value,))
    elif len(parts) >= 3 and parts[-1] == 'remove' and \
            names.UUID_RE.match(parts[-2]):
        if value != '1':
            _refuse(path, 'an mdev is removed by writing 1')
    else:
        _refuse(path, 'not an mdev control attribute')


def _open_without_links(path: str) -> int:
    """A write descriptor of ``path``, reached from ``/`` without
    following a link at any step."""
    directory = os.open('/', os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.strip('/').split('/')[:-1]:
            inner = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW
                            | os.O_CLOEXEC, dir_fd=directory)
            os.close(directory)
            directory = inner
        name = os.path.basename(path)
        # Not even opened unless a regular file: opening a FIFO or a
        # device node for writing has effects of its own.
        if not stat.S_ISREG(os.stat(name, dir_fd=directory,
                                    follow_symlinks=False).st_mode):
            _refuse(path, 'not a regular file')
        return os.open(name, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW
                       | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    finally:
        os.close(directory)


@privsep.sysfs_admin.entrypoint
def write_control_attribute(path: str, value: str) -> None:
    """Write ``value`` into the mdev control attribute ``path``."""
    root = None if privsep.in_process() else \
        privsep.daemon_settings().sysfs_root
    check_control_attribute(path, value, root)
    fd = _open_without_links(path)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _refuse(path, 'not a regular file')
        os.write(fd, value.encode('ascii'))
    finally:
        os.close(fd)
