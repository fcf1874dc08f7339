"""``nova-shim``: a small CLI over the nova_shim compute API.

``--url`` (or ``NOVA_SHIM_URL``; default ``http://127.0.0.1:8774/v2.1``)
names the API. Credentials are keystoneauth's, as the ``openstack`` CLI
takes them: ``--os-auth-type`` and the plugin's options, or the
``OS_*`` variables of an openrc (``OS_AUTH_URL`` alone means
``password``), or ``--os-token`` (``OS_TOKEN``), a token to send as it
is. Without any, it calls an open (``noauth2``) API with identity
headers: ``--project``/``--user``, and the admin role with ``--admin``.
``boot --device-profile DP [--flavor F] NAME`` boots a server from a
configured flavor with ``accel:device_profile=DP`` added to its extra
specs, and waits for ACTIVE or ERROR unless ``--no-wait``.
``resize SERVER FLAVOR`` and ``migrate SERVER [--host HOST]`` move a
server (``--wait``: until VERIFY_RESIZE, or until the move failed and it
is back as it was); ``resize-confirm`` and ``resize-revert`` end the
move, as novaclient names them. Refused operations (``live-migrate``,
``suspend``, ``resume``) print the API's message and exit 1, as every
error does.
``image-create [--metadata K=V] SERVER NAME`` and ``backup SERVER NAME
BACKUP_TYPE ROTATION`` (as novaclient names them) print the new image's
id. ``boot --min-count N --max-count M`` boots several servers from one
request. ``--admin`` sends the admin role, which ``evacuate SERVER
[--host HOST]``, ``service-list`` and ``service-set HOST [--down | --up]
[--disable [--reason R] | --enable]`` need.
"""

import argparse
import json
import os
import sys
import time

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
import requests

DEFAULT_URL = 'http://127.0.0.1:8774/v2.1'
# command -> action body for POST /servers/{id}/action
SIMPLE_ACTIONS = {
    'start': {'os-start': None}, 'stop': {'os-stop': None},
    'pause': {'pause': None}, 'unpause': {'unpause': None},
    'rebuild': {'rebuild': {}}, 'shelve': {'shelve': None},
    'shelve-offload': {'shelveOffload': None}, 'unshelve': {'unshelve': None},
    'resize-confirm': {'confirmResize': None},
    'resize-revert': {'revertResize': None},
    'live-migrate': {'os-migrateLive': {
        'host': None, 'block_migration': 'auto'}},
    'suspend': {'suspend': None}, 'resume': {'resume': None},
    'rescue': {'rescue': None}, 'unrescue': {'unrescue': None},
}


def _image_create(args: argparse.Namespace) -> dict:
    metadata = {}
    for item in args.metadata:
        key, sep, value = item.partition('=')
        if not sep:
            raise CLIError('--metadata takes KEY=VALUE, not %r' % item)
        metadata[key] = value
    return {'createImage': {'name': args.name, 'metadata': metadata}}


# command -> action body of the commands that print an image id
IMAGE_COMMANDS = {
    'image-create': _image_create,
    'backup': lambda args: {'createBackup': {
        'name': args.name, 'backup_type': args.backup_type,
        'rotation': args.rotation}},
}


class CLIError(Exception):
    """An error to print; the CLI then exits 1."""


class Client:
    """The API at ``url``, called with a keystoneauth plugin's token
    (``auth``), a given token, or, for an open API, identity headers."""

    def __init__(self, url: str, project: str, user: str,
                 admin: bool = False, auth=None,
                 token: str | None = None) -> None:
        self.url = url.rstrip('/')
        self.headers = {'OpenStack-API-Version': 'compute 2.82'}
        self.keystone = None
        if auth is not None:
            self.keystone = ks_session.Session(auth=auth)
        elif token:
            self.headers['X-Auth-Token'] = token
        else:
            self.headers.update({
                'X-Project-Id': project, 'X-User-Id': user,
                'X-Roles': ('admin,member,reader' if admin
                            else 'member,reader')})
        self.session = requests.Session()
        self.session.headers.update(self.headers)

    def _send(self, method: str, url: str, headers: dict | None = None,
              **kw):
        if self.keystone is None:
            return self.session.request(method, url, timeout=60,
                                        headers=headers, **kw)
        return self.keystone.request(url, method,
                                     headers=dict(self.headers,
                                                  **(headers or {})),
                                     raise_exc=False, timeout=60, **kw)

    def call(self, method: str, path: str, ok=(200, 202, 204), **kw):
        try:
            resp = self._send(method, self.url + path, **kw)
        except (requests.RequestException,
                ks_exceptions.ClientException) as exc:
            raise CLIError('cannot reach %s: %s' % (self.url, exc)) from exc
        if resp.status_code not in ok:
            try:
                fault = next(iter(resp.json().values()))['message']
            except (ValueError, StopIteration, KeyError, TypeError):
                fault = resp.text[:300]
            raise CLIError('%s (HTTP %d)' % (fault, resp.status_code))
        return resp.json() if resp.content else None

    def find(self, ref: str) -> str:
        """A server id from an id or a unique name."""
        servers = self.call('GET', '/servers')['servers']
        ids = [s['id'] for s in servers if ref in (s['id'], s['name'])]
        if len(ids) != 1:
            raise CLIError('%s server named %r' % (
                'no' if not ids else 'more than one', ref))
        return ids[0]


def _print_server(server: dict) -> None:
    fields = ['id', 'name', 'status', 'OS-EXT-STS:vm_state',
              'OS-EXT-STS:task_state', 'OS-EXT-STS:power_state',
              'OS-EXT-SRV-ATTR:hypervisor_hostname']
    for field in fields:
        print('%-38s %s' % (field, server.get(field)))
    print('%-38s %s' % ('flavor', json.dumps(server['flavor'])))
    if server.get('fault'):
        print('%-38s %s' % ('fault', server['fault']['message']))
    for arq in server.get('accelerator_requests', []):
        print('%-38s %s %s %s %s' % ('accelerator_request', arq['uuid'],
                                     arq['state'], arq['attach_handle_type'],
                                     json.dumps(arq['attach_handle_info'])))
    for hostdev in server.get('hostdevs', []):
        print('%-38s %s %s' % ('hostdev', hostdev['type'],
                               hostdev['address']))


# The statuses in which a server waited for has arrived (with no task).
SETTLED = ('ACTIVE', 'ERROR', 'SHUTOFF', 'VERIFY_RESIZE')


def _wait(client: Client, server_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        server = client.call('GET', '/servers/' + server_id)['server']
        if server['status'] in SETTLED and \
                not server['OS-EXT-STS:task_state']:
            return server
        if time.monotonic() > deadline:
            raise CLIError('server %s still %s after %ss' % (
                server_id, server['status'], timeout))
        time.sleep(0.2)


def boot(client: Client, args: argparse.Namespace) -> int:
    flavor = client.call('GET', '/flavors/' + args.flavor)['flavor']
    flavor['extra_specs']['accel:device_profile'] = args.device_profile
    body = {'name': args.name, 'flavor': flavor}
    max_count = args.max_count or args.min_count
    if max_count > 1:
        return boot_many(client, args, dict(
            body, min_count=args.min_count, max_count=max_count,
            return_reservation_id=True))
    server = client.call('POST', '/servers', json={'server': body})['server']
    if not args.no_wait:
        server = _wait(client, server['id'], args.timeout)
    _print_server(server)
    return 1 if server['status'] == 'ERROR' else 0


def boot_many(client: Client, args: argparse.Namespace, body: dict) -> int:
    """One request for several servers; one line per server."""
    reservation = client.call('POST', '/servers', json={'server': body})[
        'reservation_id']
    deadline = time.monotonic() + args.timeout
    while True:
        servers = client.call('GET', '/servers/detail', params={
            'reservation_id': reservation})['servers']
        building = [s for s in servers if s['status'] == 'BUILD']
        if args.no_wait or not building or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    print('reservation %s: %d server(s)' % (reservation, len(servers)))
    for server in servers:
        _print_state(server)
    return 1 if not servers or any(s['status'] == 'ERROR'
                                   for s in servers) else 0


def services(client: Client, args: argparse.Namespace) -> int:
    """``service-list`` and ``service-set``."""
    found = client.call('GET', '/os-services', params=(
        {'host': args.host} if args.command == 'service-set' else {}))[
            'services']
    if args.command == 'service-set':
        if not found:
            raise CLIError('no compute service on host %r' % args.host)
        changes: dict = {}
        if args.down is not None:
            changes['forced_down'] = args.down
        if args.disable is not None:
            changes['status'] = 'disabled' if args.disable else 'enabled'
        if args.reason:
            changes['disabled_reason'] = args.reason
        if not changes:
            raise CLIError('say what to set: --down, --up, --disable or '
                           '--enable')
        found = [client.call('PUT', '/os-services/' + found[0]['id'],
                             json=changes)['service']]
    for service in found:
        print('%s  %-30s %-8s %-5s %s' % (
            service['id'], service['host'], service['status'],
            service['state'], service['disabled_reason'] or ''))
    return 0


# command -> (action body, request headers) of the actions that take
# arguments
ARGUMENT_ACTIONS = {
    'reboot': lambda args: (
        {'reboot': {'type': 'HARD' if args.hard else 'SOFT'}}, None),
    'evacuate': lambda args: (
        {'evacuate': {'host': args.host} if args.host else {}}, None),
    'resize': lambda args: ({'resize': {'flavorRef': args.flavor}}, None),
    # A host needs 2.56.
    'migrate': lambda args: (
        {'migrate': {'host': args.host} if args.host else None},
        {'OpenStack-API-Version': 'compute 2.56'}),
}


def _action(args: argparse.Namespace) -> tuple[dict, dict | None]:
    """The body and headers of a command's server action."""
    if args.command in ARGUMENT_ACTIONS:
        return ARGUMENT_ACTIONS[args.command](args)
    return SIMPLE_ACTIONS[args.command], None


def run(client: Client, args: argparse.Namespace) -> int:
    """Every command except boot."""
    if args.command == 'list':
        for server in client.call('GET', '/servers/detail')['servers']:
            print('%s  %-20s %s' % (server['id'], server['name'],
                                    server['status']))
        return 0
    server_id = client.find(args.server)
    path = '/servers/' + server_id
    if args.command == 'show':
        _print_server(client.call('GET', path)['server'])
    elif args.command == 'delete':
        client.call('DELETE', path)
    elif args.command in IMAGE_COMMANDS:
        print(client.call('POST', path + '/action',
                          json=IMAGE_COMMANDS[args.command](args))['image_id'])
        return 0
    else:
        body, headers = _action(args)
        client.call('POST', path + '/action', json=body, headers=headers)
    if args.command in ('unshelve', 'resize', 'migrate') and args.wait:
        _print_server(_wait(client, server_id, args.timeout))
    elif args.command == 'delete':
        print('%s  %-20s deleted' % (server_id, args.server))
    elif args.command != 'show':
        _print_state(client.call('GET', path)['server'])
    return 0


def _print_state(server: dict) -> None:
    """One line: the server's state after an action was accepted."""
    print('%s  %-20s %s  (task: %s, power state: %s)' % (
        server['id'], server['name'], server['status'],
        server['OS-EXT-STS:task_state'], server['OS-EXT-STS:power_state']))


def parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog='nova-shim', description=__doc__)
    top.add_argument('--url', default=os.environ.get('NOVA_SHIM_URL',
                                                     DEFAULT_URL))
    ks_loading.register_auth_argparse_arguments(
        top, argv or [],
        default='password' if os.environ.get('OS_AUTH_URL') else None)
    top.add_argument('--os-token', default=os.environ.get('OS_TOKEN'),
                     help='a Keystone token to send as it is (OS_TOKEN)')
    top.add_argument('--project', default='demo')
    top.add_argument('--admin', action='store_true',
                     help='send the admin role as well')
    top.add_argument('--user', default='demo')
    top.add_argument('--timeout', type=float, default=120)
    sub = top.add_subparsers(dest='command', required=True)
    boot_cmd = sub.add_parser('boot', help='boot a server')
    boot_cmd.add_argument('--device-profile', required=True)
    boot_cmd.add_argument('--flavor', default='m1.tiny')
    boot_cmd.add_argument('--no-wait', action='store_true')
    boot_cmd.add_argument('--min-count', type=int, default=1,
                          help='boot at least this many servers, or none')
    boot_cmd.add_argument('--max-count', type=int,
                          help='boot up to this many servers')
    boot_cmd.add_argument('name')
    evacuate_cmd = sub.add_parser(
        'evacuate', help='rebuild a server of a host that is down on '
                         'another host (admin)')
    evacuate_cmd.add_argument('server', help='server id or name')
    evacuate_cmd.add_argument('--host', help='the host to rebuild it on '
                                             '(default: the scheduler '
                                             'chooses)')
    sub.add_parser('service-list', help='list compute services (admin)')
    service_cmd = sub.add_parser('service-set',
                                 help='mark a compute service down or up, '
                                      'disable or enable it (admin)')
    service_cmd.add_argument('host')
    service_cmd.add_argument('--down', dest='down', action='store_const',
                             const=True)
    service_cmd.add_argument('--up', dest='down', action='store_const',
                             const=False)
    service_cmd.add_argument('--disable', dest='disable',
                             action='store_const', const=True)
    service_cmd.add_argument('--enable', dest='disable',
                             action='store_const', const=False)
    service_cmd.add_argument('--reason', help='why it is disabled')
    sub.add_parser('list', help='list servers')
    for name in ['show', 'delete', 'reboot', 'resize', 'migrate',
                 'unshelve'] + sorted(set(SIMPLE_ACTIONS) - {'unshelve'}):
        cmd = sub.add_parser(name, help='%s a server' % name)
        cmd.add_argument('server', help='server id or name')
        if name == 'reboot':
            cmd.add_argument('--hard', action='store_true')
        if name == 'resize':
            cmd.add_argument('flavor')
        if name == 'migrate':
            cmd.add_argument('--host', help='the host to move it to '
                                            '(admin; default: the '
                                            'scheduler chooses)')
        if name in ('unshelve', 'resize', 'migrate'):
            cmd.add_argument('--wait', action='store_true')
    image_cmd = sub.add_parser('image-create',
                               help='snapshot a server into an image')
    image_cmd.add_argument('--metadata', action='append', default=[],
                           metavar='KEY=VALUE')
    image_cmd.add_argument('server', help='server id or name')
    image_cmd.add_argument('name', help='name of the image')
    backup_cmd = sub.add_parser('backup', help='back a server up into an '
                                'image, keeping ROTATION backups')
    backup_cmd.add_argument('server', help='server id or name')
    backup_cmd.add_argument('name', help='name of the backup image')
    backup_cmd.add_argument('backup_type', help='e.g. daily or weekly')
    backup_cmd.add_argument('rotation', type=int,
                            help='how many backups of the type to keep')
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser(argv).parse_args(argv)
    try:
        auth = ks_loading.load_auth_from_argparse_arguments(args)
    except ks_exceptions.ClientException as exc:
        print('ERROR: %s' % exc, file=sys.stderr)
        return 1
    client = Client(args.url, args.project, args.user, args.admin,
                    auth=auth, token=args.os_token)
    try:
        if args.command == 'boot':
            return boot(client, args)
        if args.command.startswith('service-'):
            return services(client, args)
        return run(client, args)
    except CLIError as exc:
        print('ERROR: %s' % exc, file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
