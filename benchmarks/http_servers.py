"""The WSGI servers that were candidates for the built-in servers.

Each candidate serves a WSGI app the way the built-in servers must: it
binds a port (0 picks one) and reports it, serves from a background
thread (``start``) and closes its connections on ``stop``.

* ``waitress``: ``lite_common.wsgi_server.WSGIServer``, the one
  chosen;
* ``cheroot`` (CherryPy's server): a pool of threads, each reading a
  connection's request and answering it;
* ``wsgiref``: the standard library's server with a thread per
  connection, as placement_stub and nova_shim ran before;
* ``granian``: Rust's hyper in front of Python threads. It serves WSGI
  only from worker processes of its own (its in-process ``embed`` mode
  is ASGI only), so it cannot share a process with the all-in-one's
  conductor; ``GranianProcess`` runs it for the probe.

cheroot and granian are not dependencies of the project; ``pip install
cheroot granian`` to try them.
"""

import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from wsgiref import simple_server

from lite_common import wsgi_server

THREADS = wsgi_server.THREADS
READ_TIMEOUT = wsgi_server.READ_TIMEOUT


class _Url:
    @property
    def url(self):
        return 'http://%s:%d' % (self.host, self.port)


class CherootServer(_Url):
    def __init__(self, app, host='127.0.0.1', port=0, threads=THREADS,
                 read_timeout=READ_TIMEOUT, **_):
        from cheroot import wsgi
        self._server = wsgi.Server((host, port), app, numthreads=threads,
                                   timeout=read_timeout,
                                   request_queue_size=128,
                                   shutdown_timeout=1)
        self._server.prepare()
        self.host = host
        self.port = self._server.bind_addr[1]
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._server.serve,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._server.stop()
        self._thread.join(timeout=5)


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002
        pass


class _ThreadingWSGIServer(socketserver.ThreadingMixIn,
                           simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class WsgirefServer(_Url):
    def __init__(self, app, host='127.0.0.1', port=0, **_):
        self._server = simple_server.make_server(
            host, port, app, server_class=_ThreadingWSGIServer,
            handler_class=_QuietHandler)
        self.host = host
        self.port = self._server.server_address[1]
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class GranianProcess(_Url):
    """granian's WSGI mode in a child process, serving ``factory``
    (``module:function`` returning a WSGI app)."""

    def __init__(self, factory, host='127.0.0.1', threads=THREADS,
                 env=None, **_):
        with socket.socket() as probe:
            probe.bind((host, 0))
            self.port = probe.getsockname()[1]
        self.host = host
        self._args = [sys.executable, '-m', 'granian', '--interface', 'wsgi',
                      '--factory', '--host', host, '--port', str(self.port),
                      '--workers', '1', '--blocking-threads', str(threads),
                      '--no-ws', factory]
        self._env = dict(os.environ, **(env or {}))
        self._proc = None

    def start(self):
        self._proc = subprocess.Popen(self._args, env=self._env,
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection((self.host, self.port), 1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError('granian did not start')

    def stop(self):
        self._proc.terminate()
        self._proc.wait(timeout=30)


IN_PROCESS = {
    'waitress': wsgi_server.WSGIServer,
    'cheroot': CherootServer,
    'wsgiref': WsgirefServer,
}

