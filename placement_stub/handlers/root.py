"""Handler for GET /: the version discovery document."""

from placement_stub.handlers import common
from placement_stub import microversion as mv


def home(req):
    return common.json_response({'versions': [{
        'id': 'v1.0',
        'max_version': mv.version_string(mv.MAX_VERSION),
        'min_version': mv.version_string(mv.MIN_VERSION),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ''}],
    }]})
