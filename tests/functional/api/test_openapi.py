"""The OpenAPI description (``api-ref/openapi.yaml``, served at
``/v2/openapi.yaml``) is valid and matches the API: every operation it
lists answers a valid request with a documented status and a body of the
documented shape, request body schemas are the ones the API validates
with, and no route outside it is answered."""

import copy
import json
import pathlib

import jsonschema
import openapi_spec_validator
import pytest
import requests
import yaml

from cyborg_lite.api import app as api_app
from cyborg_lite.api import guard
from cyborg_lite.api.schemas import accelerator_requests as arq_schemas
from cyborg_lite.api.schemas import attributes as attr_schemas
from cyborg_lite.api.schemas import device_profiles as dp_schemas
from tests.fixtures import cyborg_api
from tests.functional.api import helpers

ROOT = pathlib.Path(__file__).resolve().parents[3]
SPEC_FILE = ROOT / 'api-ref' / 'openapi.yaml'
SPEC = yaml.safe_load(SPEC_FILE.read_text())
METHODS = ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')


def test_file_is_valid_openapi():
    openapi_spec_validator.validate(SPEC)
    assert SPEC['openapi'].startswith('3.1')


def test_package_ships_the_same_file():
    assert api_app.openapi_document() == SPEC_FILE.read_bytes()


@pytest.mark.parametrize('path', ['/v2/openapi.yaml', '/openapi.yaml',
                                  '/accelerator/v2/openapi.yaml'])
def test_served_document_is_the_file(stack, path):
    # No identity headers at all: the document is public.
    resp = requests.get(stack.url + path, timeout=30)
    assert resp.status_code == 200
    assert resp.headers['Content-Type'].startswith('application/yaml')
    assert resp.content == SPEC_FILE.read_bytes()


def test_served_document_is_what_its_description_says(stack):
    """The 200 of ``GET /v2/openapi.yaml`` is a YAML document, which a
    client parses to an object: the description says so."""
    resp = requests.get(stack.url + '/v2/openapi.yaml', timeout=30)
    documented = SPEC['paths']['/v2/openapi.yaml']['get']['responses'][
        '200']['content']['application/yaml']['schema']
    assert documented['type'] == 'object'
    jsonschema.Draft202012Validator(documented).validate(
        yaml.safe_load(resp.content))


def test_the_guard_routes_are_the_documented_ones():
    """The guard's route table (404 and 405 before Pecan) and the
    description list the same paths and methods."""
    names = {'{ident}': guard.ID, '{arq_uuid}': guard.ID,
             '{deployable_uuid}': guard.ID, '{device_uuid}': guard.ID,
             '{attribute_uuid}': guard.ID}
    documented = {}
    for template, item in SPEC['paths'].items():
        if template in ('/', '/v2/openapi.yaml'):
            continue
        shape = tuple(names.get(part, part)
                      for part in template.split('/')[2:])
        documented[shape] = {m.upper() for m in item if m.upper() in METHODS}
    assert documented == {shape: set(methods) for shape, methods
                          in guard.ROUTES.items()}


def test_document_is_read_only(stack):
    resp = requests.post(stack.url + '/v2/openapi.yaml', timeout=30)
    helpers.assert_error(resp, 405)
    assert resp.headers['Allow'] == 'GET, HEAD'


@pytest.mark.parametrize('component,schema', [
    ('DeviceProfileCreate', dp_schemas.POST_DEVICE_PROFILE_SCHEMA_V2_0),
    ('ARQCreate', arq_schemas.POST_ARQ_SCHEMA_V2_0),
    ('ARQPatch', arq_schemas.PATCH_ARQ_SCHEMA_V2_0),
    ('AttributeCreate', attr_schemas.POST_ATTRIBUTE_SCHEMA_V2_0),
    ('ProgramPatch', attr_schemas.PATCH_PROGRAM_SCHEMA_V2_0),
])
def test_request_schemas_are_the_validated_ones(component, schema):
    documented = copy.deepcopy(SPEC['components']['schemas'][component])
    for key in ('description', 'example'):
        documented.pop(key, None)
    assert documented == json.loads(json.dumps(schema))


def node_ref(ref):
    return [p.replace('~1', '/').replace('~0', '~')
            for p in ref.lstrip('#/').split('/')]


def deref(node):
    while isinstance(node, dict) and '$ref' in node:
        target = SPEC
        for part in node_ref(node['$ref']):
            target = target[part]
        node = target
    return node


def validate(method, template, resp):
    """``resp`` is a documented answer of the operation, with the
    documented body and headers."""
    operation = SPEC['paths'][template][method.lower()]
    assert str(resp.status_code) in operation['responses'], (
        method, template, resp.status_code, resp.text[:300])
    documented = deref(operation['responses'][str(resp.status_code)])
    for name, header in documented.get('headers', {}).items():
        header = deref(header)
        if header.get('required'):
            assert name in resp.headers, (method, template, name)
            jsonschema.validate(resp.headers[name], header['schema'])
    content = documented.get('content')
    if not content:
        assert resp.content == b'', (method, template, resp.content[:200])
        return None
    (media_type, body_doc), = content.items()
    assert resp.headers['Content-Type'].startswith(media_type)
    if media_type != 'application/json':
        return resp.content
    schema = dict(body_doc['schema'], components=SPEC['components'])
    body = resp.json()
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.FormatChecker()).validate(body)
    if resp.status_code >= 400:
        helpers.fault(resp)
    return body


@pytest.fixture(scope='module')
def world(stack):
    """Objects for every path parameter."""
    admin = stack.client(cyborg_api.ADMIN)
    dp = helpers.create_profile(admin, [{'resources:FPGA': '1'}])
    dp2 = helpers.create_profile(admin, [{'resources:GPU': '1'}])
    dp3 = helpers.create_profile(admin, [{'resources:GPU': '1'}])
    arqs = helpers.create_arqs(admin, dp['name'])
    dep = stack.deployable('FPGA')
    device = admin.get('/devices').json()['devices'][0]
    return dict(stack=stack, dp=dp, dp2=dp2, dp3=dp3, arq=arqs[0],
                dep=dep, device=device)


def _calls(w):
    """A valid request for every documented operation, in an order where
    deletes come last: (method, template, path, kwargs, identity)."""
    stack = w['stack']
    instance = helpers.new_uuid()
    arq, dep, dev = w['arq'], w['dep'], w['device']
    v23 = {'OpenStack-API-Version': 'accelerator 2.3'}
    return [
        ('GET', '/', '/', {}, None),
        ('GET', '/v2', '/v2', {'headers': v23}, None),
        ('GET', '/v2/openapi.yaml', '/v2/openapi.yaml', {}, None),
        ('GET', '/v2/device_profiles', '/v2/device_profiles',
         {'params': {'name': w['dp']['name']}}, cyborg_api.ADMIN),
        ('GET', '/v2/device_profiles/{ident}',
         '/v2/device_profiles/' + w['dp']['name'], {'headers': v23},
         cyborg_api.ADMIN),
        ('POST', '/v2/device_profiles', '/v2/device_profiles',
         {'json': [{'name': helpers.unique(), 'description': 'x',
                    'groups': [{'resources:GPU': '1',
                                'trait:CUSTOM_X': 'required'}]}]},
         cyborg_api.ADMIN),
        ('POST', '/v2/accelerator_requests', '/v2/accelerator_requests',
         {'json': {'device_profile_name': w['dp']['name']}},
         cyborg_api.ADMIN),
        ('PATCH', '/v2/accelerator_requests', '/v2/accelerator_requests',
         {'json': cyborg_api.bind_patch([arq['uuid']],
                                        stack.aio.hostnames[0],
                                        dep['rp_uuid'], instance)},
         cyborg_api.SERVICE),
        ('GET', '/v2/accelerator_requests', '/v2/accelerator_requests',
         {'params': {'instance': instance, 'bind_state': 'resolved'}},
         cyborg_api.ADMIN),
        ('GET', '/v2/accelerator_requests/{arq_uuid}',
         '/v2/accelerator_requests/' + arq['uuid'], {}, cyborg_api.ADMIN),
        ('PATCH', '/v2/accelerator_requests/{arq_uuid}',
         '/v2/accelerator_requests/' + arq['uuid'],
         {'json': cyborg_api.unbind_patch([arq['uuid']])},
         cyborg_api.SERVICE),
        ('GET', '/v2/deployables', '/v2/deployables',
         {'params': {'filters.field': 'name', 'filters.value': dep['name']}},
         cyborg_api.ADMIN),
        ('GET', '/v2/deployables/{deployable_uuid}',
         '/v2/deployables/' + dep['uuid'], {}, cyborg_api.ADMIN),
        ('PATCH', '/v2/deployables/{deployable_uuid}/program',
         '/v2/deployables/%s/program' % dep['uuid'],
         {'json': [{'op': 'replace', 'path': '/program',
                    'value': [{'image_uuid': helpers.new_uuid()}]}]},
         cyborg_api.ADMIN),
        ('GET', '/v2/devices', '/v2/devices',
         {'params': {'type': dev['type']}, 'headers': v23},
         cyborg_api.ADMIN),
        ('GET', '/v2/devices/{device_uuid}', '/v2/devices/' + dev['uuid'],
         {}, cyborg_api.ADMIN),
        ('POST', '/v2/devices/{device_uuid}/disable',
         '/v2/devices/%s/disable' % dev['uuid'], {}, cyborg_api.ADMIN),
        ('POST', '/v2/devices/{device_uuid}/enable',
         '/v2/devices/%s/enable' % dev['uuid'], {}, cyborg_api.ADMIN),
        ('POST', '/v2/attributes', '/v2/attributes',
         {'json': {'deployable_id': 1, 'key': 'openapi', 'value': 'v'}},
         cyborg_api.ADMIN),
        ('GET', '/v2/attributes', '/v2/attributes',
         {'params': {'key': 'openapi', 'deployable_id': '1'}},
         cyborg_api.ADMIN),
        ('GET', '/v2/attributes/{attribute_uuid}', None, {},
         cyborg_api.ADMIN),
        ('DELETE', '/v2/attributes/{attribute_uuid}', None, {},
         cyborg_api.ADMIN),
        ('DELETE', '/v2/accelerator_requests/{arq_uuid}',
         '/v2/accelerator_requests/' + arq['uuid'], {}, cyborg_api.ADMIN),
        ('DELETE', '/v2/accelerator_requests', '/v2/accelerator_requests',
         {'params': {'instance': instance}}, cyborg_api.SERVICE),
        ('DELETE', '/v2/device_profiles/{ident}',
         '/v2/device_profiles/' + w['dp2']['uuid'], {}, cyborg_api.ADMIN),
        ('DELETE', '/v2/device_profiles', '/v2/device_profiles',
         {'params': {'value': w['dp3']['name']}}, cyborg_api.ADMIN),
    ]


def _documented_operations():
    return {(method.upper(), path) for path, item in SPEC['paths'].items()
            for method in item if method.upper() in METHODS}


def test_every_operation_answers_as_documented(world):
    stack = world['stack']
    calls = _calls(world)
    assert {(m, t) for m, t, *_ in calls} == _documented_operations()
    attribute = None
    for method, template, path, kwargs, identity in calls:
        if path is None:
            path = '/v2/attributes/' + attribute['uuid']
        resp = requests.request(method, stack.url + path, timeout=30,
                                **dict(kwargs, headers=dict(
                                    identity or {},
                                    **kwargs.get('headers', {}))))
        assert resp.status_code < 300, (method, path, resp.status_code,
                                        resp.text[:500])
        body = validate(method, template, resp)
        if (method, template) == ('POST', '/v2/attributes'):
            attribute = body


def test_errors_answer_as_documented(world):
    """A 4xx of each kind, validated against the operation's entry."""
    stack = world['stack']
    admin, member = cyborg_api.ADMIN, cyborg_api.member('openapi')
    for method, template, path, kwargs, identity, status in [
            ('GET', '/v2/accelerator_requests', '/v2/accelerator_requests',
             {'params': {'bind_state': 'x'}}, admin, 400),
            ('POST', '/v2/device_profiles', '/v2/device_profiles',
             {'json': [{'name': 'x', 'groups': [{'resources:GPU': '1'}]}]},
             member, 403),
            ('GET', '/v2/devices/{device_uuid}',
             '/v2/devices/' + helpers.new_uuid(), {}, admin, 404),
            ('GET', '/v2/devices', '/v2/devices',
             {'headers': {'OpenStack-API-Version': 'accelerator 2.9'}},
             admin, 406),
            ('POST', '/v2/device_profiles', '/v2/device_profiles',
             {'json': [{'name': world['dp']['name'],
                        'groups': [{'resources:GPU': '1'}]}]}, admin, 409),
            ('POST', '/v2/attributes', '/v2/attributes',
             {'data': b'{' * 200000,
              'headers': {'Content-Type': 'application/json'}}, admin, 413),
            ('GET', '/v2', '/v2',
             {'headers': {'OpenStack-API-Version': '10'}}, None, 406)]:
        resp = requests.request(method, stack.url + path, timeout=30,
                                **dict(kwargs, headers=dict(
                                    identity or {},
                                    **kwargs.get('headers', {}))))
        assert resp.status_code == status, (method, path, resp.text[:300])
        validate(method, template, resp)


def _templates_as_urls(world):
    fill = {'{ident}': world['dp']['uuid'],
            '{arq_uuid}': helpers.new_uuid(),
            '{deployable_uuid}': world['dep']['uuid'],
            '{device_uuid}': world['device']['uuid'],
            '{attribute_uuid}': helpers.new_uuid()}
    for template in SPEC['paths']:
        url = template
        for key, value in fill.items():
            url = url.replace(key, value)
        yield template, url


def test_no_route_outside_the_document(world):
    """Each method a path does not document is a 404 or 405; unknown
    paths (upstream's removed v1 API, /v2/accelerators) are 404."""
    stack = world['stack']
    documented = _documented_operations()
    for template, url in _templates_as_urls(world):
        for method in METHODS:
            if (method, template) in documented:
                continue
            resp = requests.request(method, stack.url + url, timeout=30,
                                    headers=cyborg_api.SERVICE)
            assert resp.status_code in (404, 405), (method, url,
                                                    resp.status_code)
            helpers.fault(resp)
    for path in ('/v1', '/v1/accelerators', '/v2/accelerators', '/v2/fpgas',
                 '/v2/devices/%s/reset' % world['device']['uuid'],
                 '/v2/deployables/%s/reprogram' % world['dep']['uuid'],
                 '/v3', '/v2/openapi.json'):
        for method in METHODS:
            resp = requests.request(method, stack.url + path, timeout=30,
                                    headers=cyborg_api.SERVICE)
            assert resp.status_code in (404, 405), (method, path,
                                                    resp.status_code)
