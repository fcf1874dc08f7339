"""Resource providers, inventories, classes, traits, aggregates over HTTP."""

import uuid

import os_resource_classes
import os_traits

from tests.functional.placement_stub.conftest import assert_error


def test_version_document(client):
    resp = client.call('GET', '/', version='1.0')
    assert resp.json == {'versions': [{
        'id': 'v1.0', 'max_version': '1.39', 'min_version': '1.0',
        'status': 'CURRENT', 'links': [{'rel': 'self', 'href': ''}]}]}


def test_microversion_headers_and_errors(client):
    resp = client.call('GET', '/resource_providers', version='1.14')
    assert resp.headers['OpenStack-API-Version'] == 'placement 1.14'
    # A 406 says which versions are served, as Placement's does.
    unacceptable = assert_error(client.call('GET', '/', version='1.99'), 406)
    assert unacceptable['max_version'] == '1.39'
    assert unacceptable['min_version'] == '1.0'
    assert_error(client.call('GET', '/', version='foo'), 400)
    latest = client.call('GET', '/resource_classes', version='latest')
    assert latest.headers['OpenStack-API-Version'] == 'placement 1.39'
    assert latest.headers['Cache-Control'] == 'no-cache'
    assert_error(client.call('GET', '/resource_classes', version='1.1'), 404)


def test_provider_crud_and_generation(client):
    rp = client.provider('cn1')
    got = client.call('GET', '/resource_providers/' + rp).json
    assert got['name'] == 'cn1' and got['root_provider_uuid'] == rp
    assert got['parent_provider_uuid'] is None
    old = client.call('POST', '/resource_providers', {'name': 'x'},
                      version='1.19')
    assert old.status_int == 201 and old.headers['Location']
    assert_error(client.call('POST', '/resource_providers', {'name': 'cn1'}),
                 409, 'placement.duplicate_name')
    # A rename leaves the generation (which counts inventory, trait and
    # aggregate changes) as it is, as in Placement.
    renamed = client.call('PUT', '/resource_providers/' + rp,
                          {'name': 'cn1b'}, status=200).json
    assert renamed['generation'] == 0
    assert client.call('DELETE', '/resource_providers/' + rp).status_int == 204
    # Placement's 404 for an unknown provider has no code of its own.
    assert_error(client.call('GET', '/resource_providers/' + rp), 404,
                 'placement.undefined_code')


def test_nested_and_list_filters(client):
    root = client.provider('cn1', inventories={'VCPU': {'total': 4}})
    child = client.provider('cn1_fpga', parent=root,
                            inventories={'FPGA': {'total': 1}},
                            traits=['CUSTOM_X'])
    other = client.provider('cn2', inventories={'VCPU': {'total': 1}})
    body = client.call('GET', '/resource_providers/' + child).json
    assert body['parent_provider_uuid'] == root
    assert body['root_provider_uuid'] == root

    def uuids(query, version='latest'):
        resp = client.call('GET', '/resource_providers?' + query,
                           version=version, status=200)
        return {rp['uuid'] for rp in resp.json['resource_providers']}
    assert uuids('in_tree=' + root) == {root, child}
    assert uuids('name=cn2') == {other}
    assert uuids('uuid=' + child) == {child}
    assert uuids('resources=VCPU:2') == {root}
    assert uuids('required=CUSTOM_X') == {child}
    assert uuids('required=!CUSTOM_X') == {root, other}
    assert uuids('required=in:CUSTOM_X,HW_CPU_X86_AVX') == {child}
    assert_error(client.call('GET', '/resource_providers?required=!CUSTOM_X',
                             version='1.21'), 400,
                 'placement.undefined_code')
    assert_error(client.call('GET', '/resource_providers?in_tree=x',
                             version='1.13'), 400,
                 'placement.undefined_code')
    assert_error(client.call('DELETE', '/resource_providers/' + root), 409,
                 'placement.resource_provider.cannot_delete_parent')


def test_inventories(client):
    rp = client.provider('cn1')
    url = '/resource_providers/%s/inventories' % rp
    full = client.call('PUT', url, {
        'resource_provider_generation': 0, 'inventories': {
            'VCPU': {'total': 8, 'allocation_ratio': 2.0},
            'DISK_GB': {'total': 100, 'reserved': 10}}}, status=200).json
    assert full['resource_provider_generation'] == 1
    assert full['inventories']['VCPU']['max_unit'] == 2147483647
    assert_error(client.call('PUT', url, {
        'resource_provider_generation': 0, 'inventories': {}}), 409,
        'placement.concurrent_update')
    one = client.call('PUT', url + '/VCPU', {
        'resource_provider_generation': 1, 'total': 16}, status=200).json
    assert one['total'] == 16 and one['resource_provider_generation'] == 2
    equal = {'resource_provider_generation': 2, 'total': 16, 'reserved': 16}
    assert_error(client.call('PUT', url + '/VCPU', equal, version='1.25'),
                 400)
    client.call('PUT', url + '/VCPU', equal, version='1.26', status=200)
    assert client.call('GET', url + '/DISK_GB').json['reserved'] == 10
    assert client.call('DELETE', url + '/DISK_GB').status_int == 204
    assert_error(client.call('GET', url + '/DISK_GB'), 404)
    assert_error(client.call('PUT', url, {
        'resource_provider_generation': 4,
        'inventories': {'NOPE': {'total': 1}}}), 400)
    assert client.call('DELETE', url).status_int == 204
    assert client.call('GET', url).json['inventories'] == {}


def test_bad_input_is_400(client):
    rp = client.provider('cn1')
    url = '/resource_providers/%s/inventories' % rp
    for body in ({'inventories': {}}, {'resource_provider_generation': 0,
                                       'inventories': {'VCPU': {}}},
                 {'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': -1}}}):
        assert_error(client.call('PUT', url, body), 400)
    bad_json = client.app.put(url, 'not json', headers={
        'Content-Type': 'application/json'}, expect_errors=True)
    assert_error(bad_json, 400)
    assert_error(client.call('POST', '/resource_providers', {'name': ''}),
                 400)
    assert_error(client.call('POST', '/resource_providers',
                             {'name': 'a', 'uuid': 'nope'}), 400)
    assert client.call('PATCH', '/resource_providers').status_int == 405
    assert_error(client.call('GET', '/nowhere'), 404)
    # Beyond a 32-bit integer: a 400, not the database's out-of-range
    # error (PostgreSQL through psycopg 3 compares it as INTEGER).
    for path in ('/resource_providers', '/allocation_candidates'):
        assert_error(client.call('GET', path + '?resources=VCPU:99999999999'),
                     400, 'placement.undefined_code')


def test_resource_classes(client):
    names = [rc['name'] for rc in client.call(
        'GET', '/resource_classes').json['resource_classes']]
    assert {'VCPU', 'MEMORY_MB', 'DISK_GB', 'PGPU', 'VGPU', 'FPGA'} <= set(
        names)
    assert client.call('PUT', '/resource_classes/CUSTOM_A').status_int == 201
    assert client.call('PUT', '/resource_classes/CUSTOM_A').status_int == 204
    assert_error(client.call('PUT', '/resource_classes/VCPU2'), 400)
    assert client.call('POST', '/resource_classes',
                       {'name': 'CUSTOM_B'}).status_int == 201
    assert_error(client.call('POST', '/resource_classes',
                             {'name': 'CUSTOM_B'}), 409)
    renamed = client.call('PUT', '/resource_classes/CUSTOM_B',
                          {'name': 'CUSTOM_C'}, version='1.6', status=200)
    assert renamed.json['name'] == 'CUSTOM_C'
    assert_error(client.call('DELETE', '/resource_classes/VCPU'), 400)
    assert client.call('DELETE',
                       '/resource_classes/CUSTOM_C').status_int == 204
    assert_error(client.call('GET', '/resource_classes/CUSTOM_C'), 404)


def test_traits(client):
    assert client.call('PUT', '/traits/CUSTOM_T').status_int == 201
    assert client.call('PUT', '/traits/CUSTOM_T').status_int == 204
    assert_error(client.call('PUT', '/traits/NOT_CUSTOM'), 400)
    assert client.call('GET', '/traits/OWNER_CYBORG').status_int == 204
    listed = client.call('GET', '/traits?name=startswith:CUSTOM').json
    assert listed['traits'] == ['CUSTOM_T']
    rp = client.provider('cn1')
    url = '/resource_providers/%s/traits' % rp
    body = client.call('PUT', url, {'traits': ['CUSTOM_T', 'OWNER_CYBORG'],
                                    'resource_provider_generation': 0},
                       status=200).json
    assert body == {'traits': ['CUSTOM_T', 'OWNER_CYBORG'],
                    'resource_provider_generation': 1}
    assert_error(client.call('PUT', url, {
        'traits': [], 'resource_provider_generation': 0}), 409,
        'placement.concurrent_update')
    assert_error(client.call('PUT', url, {
        'traits': ['CUSTOM_NOPE'], 'resource_provider_generation': 1}), 400)
    assert_error(client.call('DELETE', '/traits/CUSTOM_T'), 409)
    assert client.call('GET', '/traits?associated=true').json['traits'] == [
        'CUSTOM_T', 'OWNER_CYBORG']
    assert client.call('DELETE', url).status_int == 204
    assert client.call('DELETE', '/traits/CUSTOM_T').status_int == 204
    assert_error(client.call('DELETE', '/traits/OWNER_NOVA'), 400)


def test_aggregates(client):
    rp = client.provider('cn1', inventories={'VCPU': {'total': 2}})
    agg = str(uuid.uuid4())
    url = '/resource_providers/%s/aggregates' % rp
    body = client.call('PUT', url, {'aggregates': [agg],
                                    'resource_provider_generation': 1},
                       status=200).json
    assert body['aggregates'] == [agg]
    old = client.call('PUT', url, [agg], version='1.1', status=200).json
    assert old == {'aggregates': [agg]}
    found = client.call('GET', '/resource_providers?member_of=in:' + agg)
    assert [r['uuid'] for r in found.json['resource_providers']] == [rp]


def test_noauth_roles(client):
    resp = client.call('GET', '/resource_providers',
                       headers={'X-Roles': 'member'})
    assert_error(resp, 403)
    assert client.call('GET', '/', headers={
        'X-Roles': 'member'}).status_int == 200


def test_standard_names_are_those_of_os_traits_and_os_resource_classes(
        client):
    """Every trait of os-traits (those a Nova compute driver reports,
    COMPUTE_ADDRESS_SPACE_EMULATED and the like) and every class of
    os-resource-classes is known, and standard: not to be deleted."""
    traits = set(client.call('GET', '/traits', status=200).json['traits'])
    assert set(os_traits.get_traits()) <= traits
    assert 'COMPUTE_ADDRESS_SPACE_EMULATED' in traits
    classes = {rc['name'] for rc in client.call(
        'GET', '/resource_classes', status=200).json['resource_classes']}
    assert set(os_resource_classes.STANDARDS) <= classes
    assert_error(client.call('DELETE', '/traits/COMPUTE_MEM_BACKING_FILE'),
                 400)
    assert_error(client.call('DELETE', '/resource_classes/PGPU'), 400)
