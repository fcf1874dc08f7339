"""PlacementFixture: the stub in-process on a loopback port, for tests.

Usable as a context manager::

    with PlacementFixture() as placement:
        requests.get(placement.endpoint + '/resource_providers')

or as a ``fixtures.Fixture`` (``self.useFixture(PlacementFixture())``).
Each fixture has its own SQLite database in a temporary directory.
"""

import os
import shutil
import tempfile
import threading

import fixtures

from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import server


class PlacementFixture(fixtures.Fixture):
    """Run placement_stub in a thread; ``endpoint`` is its URL."""

    def __init__(self, connection=None, host='127.0.0.1', overrides=None):
        super().__init__()
        self.connection = connection
        self.host = host
        self.overrides = dict(overrides or {})
        self.endpoint = None
        self.app = None
        self._httpd = None
        self._thread = None
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
                     ('placement_database', 'sqlite_synchronous'): False}
        overrides.update(self.overrides)
        self.conf = conf_lib.build_conf(overrides=overrides)
        self.app = deploy.deploy(self.conf)
        self._httpd = server.make_server(self.host, 0, self.app)
        self.endpoint = server.url(self._httpd)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name='placement-stub',
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def __enter__(self):
        # fixtures.Fixture.__enter__ calls setUp(), which starts us.
        return super().__enter__()

    def __exit__(self, *exc_info):
        return super().__exit__(*exc_info)
