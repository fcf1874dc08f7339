"""Shared fixtures of the agent tests: config and fixture sysfs trees."""

import pytest

from cyborg_lite.agent.sysfs import Sysfs
from cyborg_lite import conf as conf_mod
from tests.fixtures import sysfs_tree

HOST = 'compute1'


def make_conf(tree: str | None = None, config_text: str | None = None,
              tmp_path=None, **agent_overrides):
    """A ConfigOpts for the agent; ``config_text`` becomes a config file
    (needed for dynamic groups such as [vgpu_<type>])."""
    args = []
    if config_text is not None:
        path = tmp_path / 'agent.conf'
        path.write_text(config_text)
        args = ['--config-file', str(path)]
    overrides = {(None, 'host'): HOST}
    if tree is not None:
        overrides[('agent', 'sysfs_root')] = sysfs_tree.fixture_path(tree)
    for name, value in agent_overrides.items():
        group, _, opt = name.rpartition('__')
        overrides[(group or 'agent', opt)] = value
    return conf_mod.build_conf(args, overrides=overrides)


def tree_sysfs(name: str) -> Sysfs:
    return Sysfs(sysfs_tree.fixture_path(name))


@pytest.fixture
def conf_factory(tmp_path):
    def factory(tree=None, config_text=None, **overrides):
        return make_conf(tree, config_text, tmp_path, **overrides)
    return factory
