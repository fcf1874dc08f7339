"""Signature and controller inspection remembered once per process.

Pecan inspects the signature of every controller it routes through, and
oslo.policy inspects the ``__call__`` of every check in a rule, on every
request; Pecan's inspection also defines a new namedtuple class each
time. Together that was over a third of the API's own CPU per request.
A function's signature never changes, so :func:`memoize` makes both
libraries inspect each function once.

oslo.policy also tries each generic check's left side (``project_id``
in ``project_id:%(project_id)s``) as a Python literal, parsing it anew
on every check; a rule's text never changes, so each is parsed once.

Pecan also lists every attribute of every controller object on the way
(``dir()``) to look for custom path segments, before it checks whether
it has seen that controller class already; it records the segments of a
class once, so the listing is skipped for a class seen before. Under
load that listing was a quarter of Pecan's routing.

:func:`memoize` is idempotent and called when :mod:`cyborg_lite.api.app`
is imported.
"""

import ast
import inspect
import threading
import types

import pecan.routing
import pecan.util
from oslo_policy import _checks as policy_checks

_lock = threading.Lock()
_done = False


def _memoized(inspect_function):
    """``inspect_function`` with its answer kept per function (a bound
    method is keyed by its function: ``self`` does not change a
    signature)."""
    answers = {}

    def remembered(func):
        key = getattr(func, '__func__', func)
        try:
            return answers[key]
        except KeyError:
            answers[key] = answer = inspect_function(func)
            return answer

    return remembered


def _literals_parsed_once(literal_eval):
    """``ast.literal_eval`` of rule texts, each parsed once: its value,
    or the ValueError raised again."""
    answers = {}

    def remembered(text):
        try:
            value, error = answers[text]
        except KeyError:
            try:
                value, error = literal_eval(text), None
            except ValueError as exc:
                value, error = None, str(exc)
            answers[text] = value, error
        if error is not None:
            raise ValueError(error)
        return value

    return remembered


def _segments_detected_once(detect):
    """Pecan's custom path segment detection, skipped for controller
    classes it has already recorded."""
    observed = pecan.routing.__observed_controllers__

    def detect_once(obj):
        if obj.__class__ not in observed:
            detect(obj)

    return detect_once


def memoize():
    """Make Pecan and oslo.policy inspect each signature, oslo.policy
    parse each rule literal, and Pecan list each controller class, once."""
    global _done
    with _lock:
        if _done:
            return
        pecan.util._getargspec = _memoized(pecan.util._getargspec)
        pecan.routing._detect_custom_path_segments = _segments_detected_once(
            pecan.routing._detect_custom_path_segments)
        # oslo.policy reaches inspect and ast through its module
        # globals: give it namespaces whose functions remember.
        policy_checks.inspect = types.SimpleNamespace(
            getfullargspec=_memoized(inspect.getfullargspec))
        policy_checks.ast = types.SimpleNamespace(
            literal_eval=_literals_parsed_once(ast.literal_eval))
        _done = True
