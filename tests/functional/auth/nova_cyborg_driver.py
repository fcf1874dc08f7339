"""Nova 34's Cyborg client, unmodified, against the cyborg-lite API.

Run with the interpreter of Nova's own virtualenv (``.venv-nova``, made
by ``tools/run-tests.sh``), with one JSON argument::

    python nova_cyborg_driver.py '{"endpoint": ..., "auth_url": ...,
        "user_token": ..., "user_id": ..., "project_id": ...,
        "service_password": ..., "profile": ..., "rp_uuid": ...,
        "hostname": ...}'

It does what Nova's conductor and compute do with Cyborg for one
instance (``nova.accelerator.cyborg``, Nova's configuration: ``[cyborg]
endpoint_override`` and ``[service_user]`` with ``send_service_user_token``,
the user's token in the request context): the device profile's request
groups, ``create_arqs_and_match_resource_providers``, ``bind_arqs``,
``get_arqs_for_instance`` (resolved ones, then all),
``get_arq_uuids_for_instance``, ``delete_arqs_for_instance``; and it
prints one JSON document of what each step saw.

Only the standard library, Nova and its dependencies are imported here.
"""

import json
import sys
import uuid


def configure(args):
    from keystoneauth1 import loading as ks_loading
    from nova import config
    import nova.conf

    conf = nova.conf.CONF
    config.parse_args([], default_config_files=[], configure_db=False,
                      init_rpc=False)
    conf.set_override('endpoint_override', args['endpoint'], group='cyborg')
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('password'),
                       group='service_user')
    for name, value in (('send_service_user_token', True),
                        ('auth_type', 'password'),
                        ('auth_url', args['auth_url']),
                        ('username', 'nova'),
                        ('password', args['service_password']),
                        ('project_name', 'service'),
                        ('user_domain_id', 'default'),
                        ('project_domain_id', 'default')):
        conf.set_override(name, value, group='service_user')


def main(args):
    configure(args)
    from nova.accelerator import cyborg
    from nova import context
    from nova import exception
    from nova import objects

    objects.register_all()
    ctx = context.RequestContext(
        user_id=args['user_id'], project_id=args['project_id'],
        auth_token=args['user_token'], roles=['member', 'reader'])
    client = cyborg.get_client(ctx)
    seen = {}
    groups = cyborg.get_device_profile_request_groups(ctx, args['profile'])
    seen['request_groups'] = [
        {'requester_id': g.requester_id, 'resources': g.resources}
        for g in groups]
    arqs = client.create_arqs_and_match_resource_providers(
        args['profile'], {groups[0].requester_id: [args['rp_uuid']]})
    seen['created'] = [(a['state'], a['device_rp_uuid']) for a in arqs]
    instance = str(uuid.uuid4())
    client.bind_arqs({a['uuid']: {'hostname': args['hostname'],
                                  'device_rp_uuid': a['device_rp_uuid'],
                                  'instance_uuid': instance} for a in arqs})
    resolved = client.get_arqs_for_instance(instance, only_resolved=True)
    seen['resolved'] = [(a['uuid'], a['state'], a['hostname'])
                        for a in resolved]
    seen['all'] = [a['uuid'] for a in client.get_arqs_for_instance(instance)]
    seen['uuids'] = client.get_arq_uuids_for_instance(
        objects.Instance(uuid=instance, flavor=objects.Flavor(
            extra_specs={'accel:device_profile': args['profile']})))
    seen['created_uuids'] = [a['uuid'] for a in arqs]
    client.delete_arqs_for_instance(instance)
    try:
        seen['after_delete'] = client.get_arqs_for_instance(instance)
    except exception.AcceleratorRequestOpFailed as exc:
        # Nova's client says so when an instance has none.
        seen['after_delete'] = str(exc)
    print(json.dumps(seen))


if __name__ == '__main__':
    main(json.loads(sys.argv[1]))
