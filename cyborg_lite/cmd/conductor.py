"""``cyborg-lite-conductor``: the RPC server that owns the database."""

import sys

from cyborg_lite import process
from cyborg_lite import rpc
from cyborg_lite.conductor import service

DESCRIPTION = ('The cyborg-lite conductor: the RPC server that alone owns '
               'the database and mirrors devices into Placement. Run two '
               'or more per site.')


def main(argv=None):
    conf = process.setup(sys.argv[1:] if argv is None else argv,
                         description=DESCRIPTION)
    return process.serve_until_signalled(
        service.ConductorService(conf, rpc.get_transport(conf)))


if __name__ == '__main__':
    sys.exit(main())
