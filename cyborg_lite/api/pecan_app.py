"""The Pecan application object of the API.

Pecan's ``pecan.core.PecanBase.invoke_controller`` reads the
signature of the handler it is about to call, to drop the query and body
keys that the handler does not take, on every request; each reading
defines a new namedtuple class (``pecan.compat.getargspec``), which cost
14 % of an API worker's CPU under load, measured with py-spy.
``Application`` reads each handler's signature once, with Pecan's
own ``pecan.util.getargspec``, and then does what Pecan's method does
with the handler's answer: a response object is the response, anything
else is rendered with the template the handler's ``expose`` names for
the negotiated content type.
"""

import pecan
import webob
from pecan import util as pecan_util
from pecan.middleware import recursive


class Application(pecan.Pecan):
    """Pecan, reading each handler's signature once per process."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        # {handler function: the keywords it takes}; threads that miss
        # at once compute the same entry.
        self._keywords = {}

    def _accepted_keywords(self, controller):
        """The keyword arguments ``controller`` takes, or None for any."""
        function = getattr(controller, '__func__', controller)
        try:
            return self._keywords[function]
        except KeyError:
            pass
        spec = pecan_util.getargspec(controller)
        accepted = None if spec.keywords else frozenset(spec.args)
        self._keywords[function] = accepted
        return accepted

    def invoke_controller(self, controller, args, kwargs, state):
        accepted = self._accepted_keywords(controller)
        if accepted is not None:
            for key in [key for key in kwargs if key not in accepted]:
                del kwargs[key]
        result = controller(*args, **kwargs)
        if result is pecan.response:
            return
        if isinstance(result, webob.Response):
            state.response = result
            return
        self._render(controller, result, state)

    def _render(self, controller, result, state):
        """Pecan's rendering of a handler's answer into the response."""
        settings = controller._pecan
        negotiated = state.request.pecan
        template = negotiated.get(
            'override_template',
            settings.get('content_types', {}).get(
                negotiated['content_type']))
        if template is None and settings['explicit_content_type'] is \
                False and self.default_renderer == 'json':
            template = 'json'
        negotiated['content_type'] = negotiated.get(
            'override_content_type', negotiated['content_type'])
        if template:
            if template == 'json':
                negotiated['content_type'] = 'application/json'
            result = self.render(template, result)
        if result and isinstance(result, str):
            state.response.text = result
        elif result:
            state.response.body = result
        if negotiated['content_type']:
            state.response.content_type = negotiated['content_type']


def make_app(root, **kw):
    """``pecan.make_app`` for ``Application``, without debug
    middleware, static files or error documents, which the API uses
    none of."""
    return recursive.RecursiveMiddleware(Application(root, **kw))
