"""The all-in-one's Identity version documents, and nothing else.

The all-in-one's services are open (no tokens), yet some clients check
the identity service's version before a call that may need it (OSC's
``server list`` asks for Identity v3 in case ``--project`` or ``--user``
must be looked up). This app answers what keystoneauth's discovery
reads, as Keystone serves it: ``GET /`` the versions (300), ``GET /v3``
v3's document. Anything else is a 404 that says there is no Identity
service here.
"""

import json

import webob
import webob.dec

VERSION = {
    'id': 'v3.14', 'status': 'stable', 'updated': '2020-04-07T00:00:00Z',
    'media-types': [{'base': 'application/json',
                     'type': 'application/vnd.openstack.identity-v3+json'}],
}


def _json(body: dict, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.text = json.dumps(body)
    return resp


@webob.dec.wsgify
def application(req: webob.Request) -> webob.Response:
    path = req.path_info.rstrip('/')
    document = dict(VERSION, links=[{
        'rel': 'self', 'href': req.application_url.rstrip('/') + '/v3/'}])
    if req.method == 'GET' and path == '':
        return _json({'versions': {'values': [document]}}, 300)
    if req.method == 'GET' and path == '/v3':
        return _json({'version': document})
    return _json({'error': {
        'code': 404, 'title': 'Not Found',
        'message': 'The all-in-one has no Identity service: its services '
                   'serve any caller.'}}, 404)

