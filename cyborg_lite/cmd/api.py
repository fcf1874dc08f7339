"""``cyborg-lite-api``: the API on the built-in server (waitress).

Production runs ``cyborg_lite.api.wsgi:application`` under gunicorn.
"""

import sys

from lite_common import auth as common_auth
from lite_common.wsgi_server import WSGIServer

from cyborg_lite import process
from cyborg_lite.api import app
from cyborg_lite.api import auth
from cyborg_lite.api import errors

DESCRIPTION = ('The cyborg-lite API (Cyborg v2) on the built-in server, at '
               '[api] host_ip and port. Production runs '
               'cyborg_lite.api.wsgi:application under gunicorn.')


def main(argv=None):
    conf = process.setup(sys.argv[1:] if argv is None else argv,
                         description=DESCRIPTION)
    try:
        api = app.setup_app(conf)
    except auth.AuthConfigError as exc:
        return common_auth.refuse_to_start('cyborg-lite-api', exc)
    server = WSGIServer(api, conf.api.host_ip,
                        conf.api.port, error_body=errors.envelope,
                        max_body_size=conf.api.max_request_body_size)
    auth.warn_if_open(conf, server.url)
    print('cyborg-lite API listening on %s' % server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
