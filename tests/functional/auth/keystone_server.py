"""A real Keystone on loopback, for the ``keystone`` auth tests.

Keystone comes from PyPI into its own virtualenv (``.venv-keystone``,
made by ``tools/run-tests.sh``; ``CYBORG_LITE_TEST_KEYSTONE_PYTHON`` names
another interpreter). It runs on SQLite with fernet tokens: the parent
runs ``keystone-manage db_sync``, ``fernet_setup``, ``credential_setup``,
starts this file as a child (``python keystone_server.py <keystone.conf>
[prefix]``, serving Keystone's WSGI app with wsgiref on a free port it
prints, at the root or under a path such as devstack's ``/identity``),
then ``bootstrap`` with the real URL, and creates projects, users and
roles through the Identity API.

The child side imports only the standard library and keystone.
"""

import os
import subprocess
import sys

ADMIN_PASSWORD = 'admin-secret'
# Tuned as devstack tunes the Keystone of its gate jobs: bcrypt at 4
# rounds (KEYSTONE_PASSWORD_HASH_ROUNDS; at Keystone's default of 12 each
# password hashed or checked costs about 0.25 s of CPU here, and tempest's
# dynamic credentials hash and check hundreds of them), and Keystone's
# cache on (devstack's is memcached; the in-process dict backend serves a
# single server), which halves the time of each Identity API call.
CONF = """[DEFAULT]
log_file = {dir}/keystone.log
[database]
connection = sqlite:///{dir}/keystone.sqlite
[fernet_tokens]
key_repository = {dir}/fernet-keys
[fernet_receipts]
key_repository = {dir}/fernet-receipts
[credential]
key_repository = {dir}/credential-keys
[token]
provider = fernet
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = oslo_cache.dict
"""


def keystone_python():
    """The interpreter of the Keystone virtualenv, or None."""
    path = os.environ.get('CYBORG_LITE_TEST_KEYSTONE_PYTHON') or os.path.join(
        os.path.dirname(__file__), '..', '..', '..', '.venv-keystone', 'bin',
        'python')
    if not os.path.exists(path):
        return None
    probe = subprocess.run([path, '-c', 'import keystone.server.wsgi'],
                           capture_output=True)
    return path if probe.returncode == 0 else None


class Keystone:
    """Keystone in a child process; ``start``, ``stop``, ``url`` (its
    v3 API), ``port``. With ``prefix`` (``/identity``) it answers under
    that path only, as behind devstack's web server."""

    def __init__(self, python, state_dir, prefix=''):
        self.python = python
        self.dir = str(state_dir)
        self.conf = os.path.join(self.dir, 'keystone.conf')
        self.prefix = prefix
        self.proc = None
        self.port = None
        self.url = None

    def _manage(self, *args):
        manage = os.path.join(os.path.dirname(self.python), 'keystone-manage')
        subprocess.run([manage, '--config-file', self.conf, *args],
                       check=True, capture_output=True)

    def start(self):
        with open(self.conf, 'w') as f:
            f.write(CONF.format(dir=self.dir))
        owner = ['--keystone-user', str(os.getuid()),
                 '--keystone-group', str(os.getgid())]
        self._manage('db_sync')
        self._manage('fernet_setup', *owner)
        self._manage('credential_setup', *owner)
        self.proc = subprocess.Popen(
            [self.python, __file__, self.conf, self.prefix],
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(self.dir, 'server.err'), 'w'),
            text=True)
        port = self.proc.stdout.readline().strip()
        if not port:
            raise RuntimeError('keystone did not start; see %s/server.err'
                               % self.dir)
        self.port = int(port)
        self.url = 'http://127.0.0.1:%s%s/v3' % (port, self.prefix)
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-region-id', 'RegionOne',
                     '--bootstrap-public-url', self.url,
                     '--bootstrap-internal-url', self.url,
                     '--bootstrap-admin-url', self.url)
        return self

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


def mounted(app, prefix):
    """``app`` under the path ``prefix`` (``SCRIPT_NAME``), as a web
    server mounts it; a 404 elsewhere."""
    if not prefix:
        return app

    def under_prefix(environ, start_response):
        path = environ.get('PATH_INFO', '')
        if path != prefix and not path.startswith(prefix + '/'):
            start_response('404 Not Found', [('Content-Length', '0')])
            return [b'']
        environ['SCRIPT_NAME'] = environ.get('SCRIPT_NAME', '') + prefix
        environ['PATH_INFO'] = path[len(prefix):]
        return app(environ, start_response)
    return under_prefix


def serve(conf_file, prefix=''):
    import socketserver
    from wsgiref import simple_server

    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf_file
    from keystone.server import wsgi
    app = mounted(wsgi.initialize_public_application(), prefix)

    class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
        daemon_threads = True

    class Quiet(simple_server.WSGIRequestHandler):
        def log_message(self, *args):
            pass

    httpd = simple_server.make_server('127.0.0.1', 0, app,
                                      server_class=Server,
                                      handler_class=Quiet)
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


if __name__ == '__main__':
    conf_file = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else ''
    sys.argv[1:] = []  # keystone parses the command line itself
    serve(conf_file, prefix)
