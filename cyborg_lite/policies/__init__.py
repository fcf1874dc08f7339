"""oslo.policy rules, one module per resource, with upstream's names."""

import itertools
import time

from oslo_policy import policy

from cyborg_lite import exception
from cyborg_lite.policies import accelerator_requests
from cyborg_lite.policies import base
from cyborg_lite.policies import device_profiles
from cyborg_lite.policies import devices


def list_rules():
    return list(itertools.chain(base.RULES, accelerator_requests.RULES,
                                device_profiles.RULES, devices.RULES))


# oslo.policy looks for the policy file and the policy directories before
# every check (a search of the config directories and a stat of each
# candidate): a sixth of the API's own CPU per request. Edits to those
# files still take effect, within this many seconds.
POLICY_FILES_RECHECK_SECONDS = 1.0
# The most decisions an enforcer remembers; past that it starts afresh.
MAX_REMEMBERED_DECISIONS = 4096


class Enforcer(policy.Enforcer):
    """oslo.policy's Enforcer, looking for new or changed policy files at
    most once every ``POLICY_FILES_RECHECK_SECONDS``, and remembering
    its decisions (``allows``).

    A decision depends only on the rules and on what the caller's
    context holds (the target is the caller's own project), while
    oslo.policy evaluates every rule anew on each check, inspecting each
    check's signature and parsing each generic check's text: a fifth of
    the API's own CPU per request. The remembered decisions are dropped
    whenever the rules change.
    """

    _next_files_check = 0.0
    _rules_seen = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._decisions = {}

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if force_reload or not self.rules or now >= self._next_files_check:
            super().load_rules(force_reload)
            self._next_files_check = now + POLICY_FILES_RECHECK_SECONDS
            rules = frozenset((name, str(check))
                              for name, check in self.rules.items())
            if rules != self._rules_seen:
                self._rules_seen = rules
                self._decisions = {}

    def allows(self, rule, ctx):
        """Whether ``ctx``'s caller may do ``rule`` in its own project."""
        self.load_rules()
        key = (rule, ctx.project_id, ctx.user_id, frozenset(ctx.roles),
               ctx.is_admin, frozenset(ctx.service_roles),
               ctx.system_scope, ctx.domain_id)
        decisions = self._decisions
        try:
            return decisions[key]
        except KeyError:
            pass
        target = {'project_id': ctx.project_id, 'user_id': ctx.user_id}
        allowed = self.enforce(rule, target, ctx.to_policy_values())
        if len(decisions) >= MAX_REMEMBERED_DECISIONS:
            decisions = self._decisions = {}
        decisions[key] = allowed
        return allowed


def get_enforcer(conf=None):
    """An enforcer with every default registered (for oslopolicy tools
    and for the API, which passes its own ConfigOpts)."""
    if conf is None:
        from cyborg_lite import conf as cl_conf
        conf = cl_conf.build_conf()
    enforcer = Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer


def enforcer_for_tools():
    """The enforcer of the oslopolicy tools (entry point
    ``oslo.policy.enforcer``): on the global ``cfg.CONF`` that they
    parse, so that their ``--config-file`` names the policy file."""
    from oslo_config import cfg
    return get_enforcer(cfg.CONF)


def authorize(enforcer, rule, ctx):
    """Raise Forbidden unless ``ctx`` may do ``rule``. The target is the
    caller's own project: tenant isolation happens in the conductor.

    oslo.policy refuses a token whose scope (system, domain) the rule's
    ``scope_types`` do not list; a caller with no scope at all (no
    project) is refused here by the same ``scope_types``, because
    oslo.policy takes a token without system or domain for a project's.
    """
    allowed = enforcer.allows(rule, ctx)
    if allowed and not ctx.project_scoped:
        registered = enforcer.registered_rules.get(rule)
        allowed = registered is not None and any(
            scope != 'project' for scope in registered.scope_types or ())
    if not allowed:
        raise exception.Forbidden(
            'Access was denied to the following resource: %s' % rule)
