"""One INFO line per request, as Placement's ``requestlog`` writes it::

    127.0.0.1 "GET /traits?name=in:X" status: 200 len: 78 microversion: 1.6

Each line names the request through its context (oslo.log's
``%(request_id)s`` and ``%(global_request_id)s``): ``RequestLog`` makes
a context holding only the request's ids current for the thread as the
request arrives, so that a request refused before its full context is
built (a bad token, a bad path) does not log under the previous
request's ids; ``ContextMiddleware``'s context replaces it.
"""

import logging

from oslo_context import context

from placement_stub import microversion as mv

LOG = logging.getLogger(__name__)


class RequestLog:
    """Logs each request's method, URI, status, length and version."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        context.RequestContext(
            request_id=environ.get('openstack.request_id'),
            global_request_id=environ.get('openstack.global_request_id'))
        answer = {}

        def replacement(status, headers, exc_info=None):
            answer['status'] = status.split(None, 1)[0]
            answer['length'] = next(
                (value for name, value in headers
                 if name.lower() == 'content-length'), '-')
            return start_response(status, headers, exc_info)

        body = self.app(environ, replacement)
        if LOG.isEnabledFor(logging.INFO):
            self._log(environ, answer)
        return body

    @staticmethod
    def _log(environ, answer):
        uri = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
        if environ.get('QUERY_STRING'):
            uri += '?' + environ['QUERY_STRING']
        version = environ.get(mv.ENVIRON_KEY)
        LOG.info('%s "%s %s" status: %s len: %s microversion: %s',
                 environ.get('REMOTE_ADDR', '-'),
                 environ.get('REQUEST_METHOD'), uri,
                 answer.get('status', '-'), answer.get('length', '-'),
                 '%d.%d' % version if version else '-')
