"""The report diff: what changed between a host's report and the DB.

Pure functions over ``cyborg_lite.model`` dataclasses; no I/O. The
conductor loads the stored devices of a host, calls ``diff_host``,
and hands the result to ``cyborg_lite.db.inventory.apply_changes``
and to the Placement mirror. Identity follows upstream: devices by
control-path id, deployables by name, attributes by key, attach handles by
their info.
"""

import dataclasses

from cyborg_lite import model


@dataclasses.dataclass
class DeployableChange:
    """A deployable present before and after, with what changed."""

    old: model.DriverDeployable
    new: model.DriverDeployable

    @property
    def columns_changed(self) -> bool:
        return (self.old.num_accelerators != self.new.num_accelerators
                or self.old.driver_name != self.new.driver_name)

    @property
    def attributes_changed(self) -> bool:
        return set(self.old.attributes) != set(self.new.attributes)

    @property
    def handles_added(self) -> list[model.DriverAttachHandle]:
        old = {h.attach_info for h in self.old.attach_handles}
        return [h for h in self.new.attach_handles
                if h.attach_info not in old]

    @property
    def handles_removed(self) -> list[model.DriverAttachHandle]:
        new = {h.attach_info for h in self.new.attach_handles}
        return [h for h in self.old.attach_handles
                if h.attach_info not in new]

    @property
    def handle_types_changed(self) -> list[model.DriverAttachHandle]:
        old = {h.attach_info: h.attach_type for h in self.old.attach_handles}
        return [h for h in self.new.attach_handles
                if h.attach_info in old and old[h.attach_info] !=
                h.attach_type]

    @property
    def placement_changed(self) -> bool:
        return (self.old.resource_class != self.new.resource_class
                or self.old.traits != self.new.traits
                or self.old.num_accelerators != self.new.num_accelerators)


@dataclasses.dataclass
class DeviceChange:
    old: model.DriverDevice
    new: model.DriverDevice
    deployables_added: list = dataclasses.field(default_factory=list)
    deployables_removed: list = dataclasses.field(default_factory=list)
    deployables_changed: list = dataclasses.field(default_factory=list)

    @property
    def columns_changed(self) -> bool:
        fields = ('type', 'vendor', 'model', 'std_board_info',
                  'vendor_board_info')
        return any(getattr(self.old, f) != getattr(self.new, f)
                   for f in fields)


@dataclasses.dataclass
class HostDiff:
    added: list = dataclasses.field(default_factory=list)
    removed: list = dataclasses.field(default_factory=list)
    changed: list = dataclasses.field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _by(items, key):
    return {key(item): item for item in items}


def diff_device(old: model.DriverDevice,
                new: model.DriverDevice) -> DeviceChange | None:
    """The change between two versions of one device, or None."""
    if old == new:
        return None
    change = DeviceChange(old=old, new=new)
    olds = _by(old.deployables, lambda d: d.name)
    news = _by(new.deployables, lambda d: d.name)
    change.deployables_added = [news[n] for n in news if n not in olds]
    change.deployables_removed = [olds[n] for n in olds if n not in news]
    change.deployables_changed = [
        DeployableChange(old=olds[n], new=news[n])
        for n in news if n in olds and olds[n] != news[n]]
    return change


def diff_host(stored: list[model.DriverDevice],
              reported: list[model.DriverDevice]) -> HostDiff:
    """Compare what the DB holds for a host with what it reported."""
    olds = _by(stored, lambda d: d.controlpath_info)
    news = _by(reported, lambda d: d.controlpath_info)
    diff = HostDiff()
    diff.added = [news[c] for c in news if c not in olds]
    diff.removed = [olds[c] for c in olds if c not in news]
    for cpid in news:
        if cpid in olds:
            change = diff_device(olds[cpid], news[cpid])
            if change is not None:
                diff.changed.append(change)
    return diff
