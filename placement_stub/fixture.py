"""PlacementFixture: the stub in-process on a loopback port, for tests.

Usable as a context manager::

    with PlacementFixture() as placement:
        requests.get(placement.endpoint + '/resource_providers')

or as a ``fixtures.Fixture`` (``self.useFixture(PlacementFixture())``).
Each fixture has its own SQLite database in a temporary directory, and
trusts the identity headers (``noauth2``) unless ``overrides`` name
another ``[api] auth_strategy``: it listens on loopback (on ``port``; 0,
the default, picks a free one), for tests and the all-in-one.
"""

import os
import shutil
import tempfile

import fixtures

from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import server


class PlacementFixture(fixtures.Fixture):
    """Run placement_stub in a thread; ``endpoint`` is its URL."""

    def __init__(self, connection=None, host='127.0.0.1', overrides=None,
                 port=0):
        super().__init__()
        self.connection = connection
        self.host = host
        self.port = port
        self.overrides = dict(overrides or {})
        self.endpoint = None
        self.app = None
        self._httpd = None
        self._tmpdir = None

    def _setUp(self):
        self.start()
        self.addCleanup(self.stop)

    def start(self):
        if self._httpd is not None:
            return self
        connection = self.connection
        if connection is None:
            self._tmpdir = tempfile.mkdtemp(prefix='placement-stub-')
            connection = 'sqlite:///' + os.path.join(self._tmpdir,
                                                     'placement.sqlite')
        overrides = {('placement_database', 'connection'): connection,
                     ('placement_database', 'sqlite_synchronous'): False,
                     ('api', 'auth_strategy'): 'noauth2',
                     # One process on its own database.
                     ('placement', 'sync_on_startup'): True}
        overrides.update(self.overrides)
        self.conf = conf_lib.build_conf(overrides=overrides)
        self.app = deploy.deploy(self.conf)
        self._httpd = server.Server(self.app, self.host, self.port).start()
        self.endpoint = self._httpd.url
        return self

    def stop(self):
        if self._httpd is not None:
            self._httpd.stop()
            self._httpd = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self):
        # fixtures.Fixture.__enter__ calls setUp(), which starts us.
        return super().__enter__()

    def __exit__(self, *exc_info):
        return super().__exit__(*exc_info)
