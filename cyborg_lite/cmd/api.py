"""``cyborg-lite-api``: the API on the built-in threaded server.

Production runs ``cyborg_lite.api.wsgi:application`` under gunicorn.
"""

import sys

from cyborg_lite.api import app
from cyborg_lite.api import errors
from cyborg_lite.cmd import common
from cyborg_lite.wsgi_server import WSGIServer


def main(argv=None):
    conf = common.setup(sys.argv[1:] if argv is None else argv)
    server = WSGIServer(app.setup_app(conf), conf.api.host_ip,
                        conf.api.port, error_body=errors.envelope)
    print('cyborg-lite API listening on %s' % server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
