"""``placement-stub-api``: serve the stub with waitress.

Accepts ``--config-file``, ``--host`` and ``--port`` (0 picks a free port)
and oslo.log's options (``--log-file``, ``--debug``, ...), and prints
the URL it serves once it listens.
"""

import sys

from oslo_config import cfg

from lite_common import auth as common_auth
from lite_common import logs
from placement_stub import auth
from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import server

CLI_OPTS = [
    cfg.StrOpt('host', help='Address to listen on (overrides [api] host).'),
    cfg.PortOpt('port', help='Port to listen on (overrides [api] port).'),
]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    conf = cfg.ConfigOpts()
    conf_lib.register_opts(conf)
    conf.register_cli_opts(CLI_OPTS)
    conf(argv, project='placement-stub')
    logs.setup(conf, 'placement-stub', stdout_is_output=True)
    host = conf.host or conf.api.host
    port = conf.api.port if conf.port is None else conf.port
    try:
        app = deploy.deploy(conf)
    except common_auth.AuthConfigError as exc:
        return common_auth.refuse_to_start('placement-stub-api', exc)
    httpd = server.Server(app, host, port)
    deploy.freeze_startup_heap()
    auth.warn_if_open(conf, httpd.url)
    print('placement-stub-api serving on %s' % httpd.url, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
